/**
 * Tracing benchmark: the CPU one call's spans cost in the process that makes them (core/tracing).
 *   npx tsx scripts/bench/observability/tracing.ts [--calls 5000] [--actions 4]
 * Each "call" makes the spans a REST-originated call makes: the request's server span, the command's
 * consumer span (its context injected into a command envelope and extracted again, as across BullMQ),
 * the call, its activeflow and --actions action spans, with the attributes the platform sets.
 * 1. off: OTEL_* unset, OpenTelemetry's no-op API (what every call pays when tracing is not asked for);
 * 2. on: the SDK's batch processor exporting OTLP/protobuf over HTTP to a sink in a child process (its
 *    CPU is not counted; ours includes building, serialising and sending the batches).
 * Reports CPU µs per call for each, and the difference: what tracing adds to a call.
 */
import { spawn } from 'node:child_process';
import { extractContext, injectContext, SpanKind, startSpan, startTracing, withActive } from '../../../core/tracing';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CALLS = arg('calls', 5000);
const ACTIONS = arg('actions', 4);

/** One call's spans, shaped as the platform makes them. */
function oneCall(i: number): void {
  const req = startSpan('POST /v1.0/calls', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.route': '/v1.0/calls', 'openvoice.request.id': `req_${i}` } });
  const envelope = withActive(req, () => ({ commandId: `c${i}`, trace: injectContext() }));
  req.setAttribute('http.response.status_code', 200);
  req.end();
  const cmd = startSpan('command call.originate', {
    kind: SpanKind.CONSUMER,
    parent: extractContext(envelope.trace),
    attributes: { 'openvoice.command.type': 'call.originate', 'openvoice.command.id': envelope.commandId },
  });
  withActive(cmd, () => {
    const call = startSpan('call', { kind: SpanKind.CLIENT, attributes: { 'openvoice.call.id': `call-${i}`, 'openvoice.call.direction': 'outgoing', 'openvoice.customer.id': 'cust' } });
    withActive(call, () => {
      const flow = startSpan('activeflow', { attributes: { 'openvoice.activeflow.id': `af-${i}`, 'openvoice.activeflow.reference_type': 'call' } });
      withActive(flow, () => {
        for (let a = 0; a < ACTIONS; a++) {
          const s = startSpan('action talk', { attributes: { 'openvoice.action.id': `a${a}`, 'openvoice.action.type': 'talk', 'openvoice.action.depth': 0 } });
          s.setAttribute('openvoice.action.outcome', 'next');
          s.end();
        }
      });
      flow.setAttribute('openvoice.activeflow.end_reason', 'finished');
      flow.end();
    });
    call.setAttributes({ 'openvoice.call.hangup_reason': 'normal', 'openvoice.call.hangup_by': 'local', 'openvoice.call.close': 'flow_end' });
    call.end();
  });
  cmd.end();
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

async function main(): Promise<void> {
  // a sink on loopback in its own process: accepts each export and answers 200
  const sink = spawn(process.execPath, ['-e', "require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.end())}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve) => sink.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  try {
    await measure(Math.min(500, CALLS)); // warm-up
    const off = await measure(CALLS);
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
    await tracing.shutdown();
    const spans = 5 + ACTIONS;
    console.log(`calls ${CALLS}, ${spans} spans each`);
    console.log(`off (no-op API): ${off.toFixed(1)} µs CPU per call`);
    console.log(`on (OTLP/protobuf export): ${onWithFlush.toFixed(1)} µs CPU per call (${(onWithFlush / spans).toFixed(1)} µs per span)`);
    console.log(`tracing adds ${(onWithFlush - off).toFixed(1)} µs CPU per call`);
  } finally {
    sink.kill();
  }
}

void main();
