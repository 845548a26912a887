/**
 * Tracing benchmark: the CPU one call's spans cost (core/tracing), all processes' spans made in this one.
 *   npx tsx scripts/bench/observability/tracing.ts [--calls 5000] [--actions 4] [--webhooks 3] [--rate 100] [--seconds 20]
 * Each "call" makes the spans a REST-originated call with a flow of --actions talk actions makes:
 * - control-api: the request's server span; --webhooks `webhook deliver` client spans, each under
 *   the context its event carried (injected, then extracted, as across the event stream);
 * - media-app: the command's consumer span (its context injected into a command envelope and
 *   extracted again, as across BullMQ), the call, its activeflow, per action `action talk` with its
 *   `media play` and `tts synthesize`, and a `media record`;
 * - sip-server: the outgoing `sip INVITE` client span (its parent extracted from the header
 *   media-app sends) and the in-dialog `sip BYE` under the dialog's context;
 * with the attributes the platform sets.
 * 1. off: OTEL_* unset, OpenTelemetry's no-op API (what every call pays when tracing is not asked for);
 * 2. on: the SDK's batch processor exporting OTLP/protobuf over HTTP to a sink in a child process (its
 *    CPU is not counted; ours includes building, serialising and sending the batches).
 * Reports CPU µs per call for each, and the difference: what tracing adds to a call. Then, with
 * --rate, calls paced at that rate for --seconds each, off then on: the share of one core each takes.
 */
import { spawn } from 'node:child_process';
import { contextOf, extractContext, injectContext, ROOT_CONTEXT, SpanKind, startSpan, startTracing, withActive } from '../../../core/tracing';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 5000);
const ACTIONS = arg('actions', 4);
const WEBHOOKS = arg('webhooks', 3);
const RATE = arg('rate', 100);
const SECONDS = arg('seconds', 20);
/** request, command, call, sip INVITE, activeflow, media record, sip BYE; per action 3; per webhook 1 */
const SPANS = 7 + 3 * ACTIONS + WEBHOOKS;

/** One call's spans, shaped as the platform makes them. */
function oneCall(i: number): void {
  const envelope = request(i);
  const events = commandSpans(i, envelope);
  webhookDeliveries(i, events);
}

/** control-api: the request's server span; its context goes out injected into the command envelope. */
function request(i: number): { commandId: string; trace: Record<string, string> } {
  const req = startSpan('POST /v1.0/calls', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.route': '/v1.0/calls', 'openvoice.request.id': `req_${i}` } });
  const envelope = withActive(req, () => ({ commandId: `c${i}`, trace: injectContext() }));
  req.setAttribute('http.response.status_code', 200);
  req.end();
  return envelope;
}

/** media-app's command and call, with sip-server's INVITE and BYE; returns the contexts its events carry. */
function commandSpans(i: number, envelope: { commandId: string; trace: Record<string, string> }): Record<string, string>[] {
  const cmd = startSpan('command call.originate', {
    kind: SpanKind.CONSUMER,
    parent: extractContext(envelope.trace),
    attributes: { 'openvoice.command.type': 'call.originate', 'openvoice.command.id': envelope.commandId },
  });
  const events: Record<string, string>[] = [];
  withActive(cmd, () => {
    const call = startSpan('call', { kind: SpanKind.CLIENT, attributes: { 'openvoice.call.id': `call-${i}`, 'openvoice.call.direction': 'outgoing', 'openvoice.customer.id': 'cust' } });
    withActive(call, () => {
      // sip-server: the INVITE's client span, its parent from the header; the dialog keeps its context
      const header = injectContext().traceparent;
      const invite = startSpan('sip INVITE', {
        kind: SpanKind.CLIENT,
        parent: header ? extractContext({ traceparent: header }, ROOT_CONTEXT) : ROOT_CONTEXT,
        attributes: { 'sip.method': 'INVITE', 'sip.call_id': `sip-${i}`, 'network.transport': 'udp' },
      });
      invite.setAttribute('sip.response.status_code', 200);
      invite.end();
      const dialog = contextOf(invite);
      for (let w = 0; w < WEBHOOKS; w++) events.push(injectContext());
      activeflow(i);
      const bye = startSpan('sip BYE', { kind: SpanKind.CLIENT, parent: dialog, attributes: { 'sip.method': 'BYE', 'sip.call_id': `sip-${i}`, 'network.transport': 'udp' } });
      bye.setAttribute('sip.response.status_code', 200);
      bye.end();
    });
    call.setAttributes({ 'openvoice.call.hangup_reason': 'normal', 'openvoice.call.hangup_by': 'local', 'openvoice.call.close': 'flow_end' });
    call.end();
  });
  cmd.end();
  return events;
}

/** media-app: the activeflow, per action `action talk` with its `media play` and `tts synthesize`, and a `media record`. */
function activeflow(i: number): void {
  const flow = startSpan('activeflow', { attributes: { 'openvoice.activeflow.id': `af-${i}`, 'openvoice.activeflow.reference_type': 'call' } });
  withActive(flow, () => {
    for (let a = 0; a < ACTIONS; a++) {
      const s = startSpan('action talk', { attributes: { 'openvoice.action.id': `a${a}`, 'openvoice.action.type': 'talk', 'openvoice.action.depth': 0 } });
      withActive(s, () => {
        const play = startSpan('media play', { attributes: { 'openvoice.media.prompt': 'tts', 'openvoice.media.sources': 1 } });
        const t = Date.now();
        const tts = startSpan('tts synthesize', {
          parent: contextOf(play),
          startTime: t,
          attributes: {
            'openvoice.tts.language': 'en-US',
            'openvoice.tts.voice': 'default',
            'openvoice.tts.characters': 40,
            'openvoice.tts.provider': 'espeak-ng',
            'openvoice.tts.cache_hit': true,
          },
        });
        tts.end(t);
        play.setAttributes({ 'openvoice.media.outcome': 'played', 'openvoice.media.played_ms': 1800 });
        play.end();
      });
      s.setAttribute('openvoice.action.outcome', 'next');
      s.end();
    }
    const rec = startSpan('media record', { attributes: { 'openvoice.recording.id': `rec-${i}` } });
    rec.setAttributes({ 'openvoice.media.outcome': 'stopped', 'openvoice.media.record.duration_ms': 8000, 'openvoice.media.sample_rate': 8000 });
    rec.end();
  });
  flow.setAttribute('openvoice.activeflow.end_reason', 'finished');
  flow.end();
}

/** control-api: each event's delivery under the context the event carried. */
function webhookDeliveries(i: number, events: Record<string, string>[]): void {
  for (const [w, carrier] of events.entries()) {
    const d = startSpan('webhook deliver', {
      kind: SpanKind.CLIENT,
      parent: extractContext(carrier, ROOT_CONTEXT),
      attributes: {
        'openvoice.webhook.event_type': 'call_hangup',
        'openvoice.webhook.target': 'customer',
        'openvoice.webhook.attempt': 1,
        'openvoice.webhook.delivery_id': `d${i}-${w}`,
        'http.request.method': 'POST',
      },
    });
    d.setAttributes({ 'http.response.status_code': 200, 'openvoice.webhook.outcome': 'delivered' });
    d.end();
  }
}

/** CPU µs per call over `n` calls, made in batches that yield to the event loop (the exporter's I/O runs). */
async function measure(n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    oneCall(i);
    if (i % 100 === 99) await new Promise((r) => setImmediate(r));
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

/** Calls paced at `rate` per second for `seconds`: the share of one core the process takes (timer overhead alike off and on). */
async function paced(rate: number, seconds: number): Promise<number> {
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  let made = 0;
  const total = Math.round(rate * seconds);
  while (made < total) {
    const due = Math.min(total, Math.floor(((performance.now() - w0) / 1000) * rate) + 1);
    while (made < due) oneCall(made++);
    await new Promise((r) => setTimeout(r, 10));
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000 / (performance.now() - w0);
}

async function main(): Promise<void> {
  // a sink on loopback in its own process: accepts each export and answers 200
  const sink = spawn(process.execPath, ['-e', "require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.end())}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve) => sink.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  try {
    await measure(Math.min(500, CALLS)); // warm-up
    const off = await measure(CALLS);
    const offShare = RATE > 0 ? await paced(RATE, SECONDS) : 0;
    const tracing = startTracing('bench', { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '200' })!;
    await measure(Math.min(500, CALLS));
    const t0 = process.cpuUsage();
    const on = await measure(CALLS);
    await tracing.flush(); // the last batches' export is part of the cost
    const onWithFlush =
      on +
      (() => {
        const d = process.cpuUsage(t0);
        return (d.user + d.system) / CALLS - on;
      })();
    const onShare = RATE > 0 ? await paced(RATE, SECONDS) : 0;
    await tracing.flush();
    await tracing.shutdown();
    console.log(`calls ${CALLS}, ${SPANS} spans each (${ACTIONS} actions, ${WEBHOOKS} webhook deliveries)`);
    console.log(`off (no-op API): ${off.toFixed(1)} µs CPU per call`);
    console.log(`on (OTLP/protobuf export): ${onWithFlush.toFixed(1)} µs CPU per call (${(onWithFlush / SPANS).toFixed(1)} µs per span)`);
    console.log(`tracing adds ${(onWithFlush - off).toFixed(1)} µs CPU per call`);
    if (RATE > 0) {
      const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
      console.log(`paced at ${RATE} calls/s for ${SECONDS} s: off ${pct(offShare)} of a core, on ${pct(onShare)}; tracing adds ${pct(onShare - offShare)} of a core`);
    }
  } finally {
    sink.kill();
  }
}

void main();
