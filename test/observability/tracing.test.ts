/**
 * One trace per call (core/tracing): a REST `POST /v1.0/calls` with a flow of talk and hangup to an
 * extension a sipp phone registered and answers yields one trace, exported over OTLP HTTP/protobuf to
 * a loopback receiver that decodes it (test/support/otlp-receiver.ts): the request's server span is
 * the root; the command that starts the call (through BullMQ and Redis, its context in the job), the call, its
 * activeflow and each action are descendants; no span names a parent the trace lacks. With the
 * variables unset nothing is exported and no context is sent. A bad endpoint refuses to start.
 * The call's events reach the customer's webhook (a loopback receiver that answers the first
 * call_hangup with a 503): each HTTP attempt is a `webhook deliver` span of the call's trace.
 */
import { listenHook } from '../../testkit/hook-receiver';
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { injectContext, startSpan, startTracing, tracesEndpoint, TracingConfigError, type Tracing } from '../../core/tracing';
import { numbersRepo } from '../../core/repos/numbers';
import type { Fixture, TestApp } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { freePort, sippMediaPort } from '../../testkit/ports';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp-receiver';
import { startTracedStack, type TracedStack } from './traced-stack';
import { createExtension, killAllSipp, registerOnly, sipp, sleep, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';
import { flowsRepo } from '../../core/repos/flows';
import { trunksRepo } from '../../core/repos/trunks';
import { parseActions } from '../../core/flow';
import { answeringPhone } from '../../testkit/media-app/phones';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { eventStreamKey } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { api } from '../control-api/flows/support';

/** A webhook receiver on loopback: 503 to the first call_hangup, 200 to everything else. */
async function hookReceiver(): Promise<{ url: string; got: string[]; close(): Promise<void> }> {
  const got: string[] = [];
  let refused = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const type = (JSON.parse(body) as { event_type: string }).event_type;
      got.push(type);
      res.statusCode = type === 'call_hangup' && !refused ? 503 : 200;
      if (type === 'call_hangup') refused = true;
      res.end();
    });
  });
  return listenHook(server, got);
}

describe('OpenTelemetry: one trace per call', function () {
  this.timeout(90_000);

  it('reads the standard variables: off when unset or OTEL_SDK_DISABLED, /v1/traces appended to the base endpoint', () => {
    expect(tracesEndpoint({})).to.equal(null);
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).to.equal('http://c:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x' })).to.equal('http://t:1/x');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).to.equal(null);
    expect(() => startTracing('t', { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).to.throw(TracingConfigError, /OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => startTracing('t', { OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' })).to.throw(TracingConfigError, /http or https/);
  });

  it('off: spans are no-ops and no trace context goes into commands', () => {
    expect(startTracing('t', {})).to.equal(null);
    const span = startSpan('x');
    expect(span.isRecording()).to.equal(false);
    span.end();
    expect(injectContext()).to.deep.equal({});
  });

  describe('on, a REST call with a flow', () => {
    let stack: TracedStack | undefined;
    let otlp: OtlpReceiver;
    let tracing: Tracing;
    let p: Platform;
    let t: TestApp;
    let f: Fixture;
    let source: string;
    let hooks: WebhookService;
    let receiver: Awaited<ReturnType<typeof hookReceiver>>;
    // a consumer group and queue of our own on the shared stream
    const group = `trace-test-${newId()}`;

    before(async () => {
      stack = await startTracedStack();
      ({ otlp, tracing, p, t, f } = stack);
      source = `+1415${String(Date.now()).slice(-7)}`;
      await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: source, type: 'normal' });
      receiver = await hookReceiver();
      hooks = await startWebhooks(t.ctx, { group, queue: `webhooks-${group}`, baseDelayMs: 100 });
      const put = await api(t, f).put('/customer', { webhook_uri: receiver.url, webhook_method: 'POST' });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
    });
    after(async () => {
      killAllSipp();
      await hooks?.close();
      await t?.ctx.redis.xgroup('DESTROY', eventStreamKey(t.ctx.config.redisKeyPrefix), group).catch(() => undefined);
      await receiver?.close();
      await stack?.close();
    });

    it('the request, the command, the call, its activeflow, each action and webhook attempt are one trace with no orphan span', async () => {
      const b = await createExtension(f.customer.id);
      const phonePort = await freePort();
      const reg = await sipp(registerOnly(b.ext.username, b.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
      expect(reg.code, reg.errors).to.equal(0);
      const callee = await answeringPhone(b, phonePort, { killAfterMs: 30_000 });
      await sleep(300);
      const res = await request(t.app)
        .post('/v1.0/calls')
        .query({ accesskey: f.accesskey })
        .send({ source: { type: 'tel', target: source }, destinations: [{ type: 'extension', target: b.ext.extension }], actions: [{ type: 'talk', option: { text: 'hello' } }, { type: 'hangup' }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      await until(async () => {
        const rows = await (await testDb())('calls').where({ customer_id: f.customer.id });
        return rows.length > 0 && rows.every((r) => r.status === 'hangup') ? rows : null;
      }, 20_000);
      // a call to an extension is started by the groupcall command (the extension's contacts ring together)
      const names = ['POST /v1.0/calls', 'command groupcall.start', 'call', 'activeflow', 'action talk', 'action hangup'];
      const hangupAttempts = (mine: ReceivedSpan[]) => mine.filter((s) => s.name === 'webhook deliver' && s.attributes['openvoice.webhook.event_type'] === 'call_hangup');
      const spans = await until(async () => {
        await tracing.flush();
        const root = otlp.spans.find((s) => s.name === 'POST /v1.0/calls');
        if (!root) return null;
        const mine = otlp.spans.filter((s) => s.traceId === root.traceId);
        return names.every((n) => mine.some((s) => s.name === n)) && hangupAttempts(mine).length === 2 ? mine : null;
      }, 20_000);
      expect(otlp.refused).to.deep.equal([]);
      const byName = (n: string): ReceivedSpan => spans.find((s) => s.name === n)!;
      const root = byName('POST /v1.0/calls');
      expect(root.parentSpanId).to.equal('');
      expect(root.kind).to.equal(2);
      expect(root.attributes['http.response.status_code']).to.equal(200);
      expect(root.service).to.equal('openvoice-test');
      // each one the child of the one before it
      for (let i = 1; i < names.length - 2; i++) expect(byName(names[i]!).parentSpanId, names[i]).to.equal(byName(names[i - 1]!).spanId);
      expect(byName('action talk').parentSpanId).to.equal(byName('activeflow').spanId);
      expect(byName('action hangup').parentSpanId).to.equal(byName('activeflow').spanId);
      expect(byName('command groupcall.start').kind).to.equal(5);
      expect(byName('call').attributes['openvoice.call.direction']).to.equal('outgoing');
      expect(byName('action talk').attributes['openvoice.action.outcome']).to.equal('next');
      // the call's INVITE to the phone: sip-server's client span, a child of the call's (the context went with the request)
      const invite = spans.find((s) => s.name === 'sip INVITE' && s.kind === 3);
      expect(invite?.parentSpanId, 'the outgoing INVITE').to.equal(byName('call').spanId);
      expect(invite?.attributes['sip.response.status_code']).to.equal(200);
      // the call's events went to the customer's webhook, each HTTP attempt a client span in the call's trace
      expect(receiver.got).to.include.members(['call_progressing', 'call_hangup']);
      const attempts = hangupAttempts(spans).sort((a, b) => Number(a.attributes['openvoice.webhook.attempt']) - Number(b.attributes['openvoice.webhook.attempt']));
      expect(attempts.map((s) => [s.kind, s.attributes['openvoice.webhook.attempt'], s.attributes['http.response.status_code'], s.attributes['openvoice.webhook.outcome']])).to.deep.equal([
        [3, 1, 503, 'retry'],
        [3, 2, 200, 'delivered'],
      ]);
      expect(attempts[0]!.statusCode).to.equal(2);
      expect(attempts[0]!.parentSpanId).to.equal(byName('call').spanId);
      expect(attempts[1]!.parentSpanId).to.equal(byName('call').spanId);
      expect(spans.filter((s) => s.name === 'webhook deliver' && s.attributes['openvoice.webhook.event_type'] === 'call_progressing')).to.have.length(1);
      // no orphans: every parent named is in the trace
      const ids = new Set(spans.map((s) => s.spanId));
      for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), `${s.name}'s parent`).to.equal(true);
      for (const s of spans) expect(s.endNs >= s.startNs, s.name).to.equal(true);
    });

    it("an incoming INVITE's server transaction in sip-server is the root of the call's trace in media-app", async () => {
      await trunksRepo(t.ctx.db).create(f.customer.id, `tr${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
      const flow = await flowsRepo(t.ctx.db).create({ customer_id: f.customer.id, actions: parseActions([{ type: 'answer' }, { type: 'hangup' }]) });
      const number = `+8991381${String(Date.now()).slice(-5)}`;
      await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number, type: 'virtual', call_flow_id: flow.id });
      // a caller's own trace header is not trusted: sip-server replaces it
      const spoofed = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
      const scenario = uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'caller', await sippMediaPort(), { byeTimeoutMs: 20_000 }).replace(
        'Max-Forwards: 70',
        `Max-Forwards: 70\nX-Openvoice-Traceparent: ${spoofed}`,
      );
      const a = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())]).done;
      expect(a.code, a.errors + a.messages).to.equal(0);
      const row = await until(
        async () => (await (await testDb())('calls').where({ customer_id: f.customer.id, direction: 'incoming', status: 'hangup' }).first()) as { id: string } | undefined,
        20_000,
      );
      const spans = await until(async () => {
        await tracing.flush();
        const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === row.id);
        if (!call) return null;
        const mine = otlp.spans.filter((s) => s.traceId === call.traceId);
        // a parent ends (and is exported) after its children: wait until none is missing, at most 20 s
        const ids = new Set(mine.map((s) => s.spanId));
        const complete = mine.every((s) => !s.parentSpanId || ids.has(s.parentSpanId));
        return complete && mine.some((s) => s.name === 'sip INVITE') && mine.some((s) => s.name === 'action hangup') ? mine : null;
      }, 20_000).catch(() => {
        const call = otlp.spans.find((s) => s.name === 'call' && s.attributes['openvoice.call.id'] === row.id);
        const mine = otlp.spans.filter((s) => s.traceId === call?.traceId);
        const ids = new Set(mine.map((s) => s.spanId));
        throw new Error(`the call's trace is not whole after 20 s: ${mine.map((s) => `${s.name}${s.parentSpanId && !ids.has(s.parentSpanId) ? ' (parent missing)' : ''}`).join(', ')}`);
      });
      const invite = spans.find((s) => s.name === 'sip INVITE')!;
      const call = spans.find((s) => s.name === 'call')!;
      expect(invite.parentSpanId).to.equal('');
      expect(invite.traceId).to.not.equal('ab'.repeat(16));
      expect(invite.kind).to.equal(2);
      expect(invite.attributes['sip.response.status_code']).to.equal(200);
      expect(invite.attributes['sip.call_id']).to.be.a('string').and.not.equal('');
      expect(call.parentSpanId).to.equal(invite.spanId);
      expect(call.kind).to.equal(2);
      expect(otlp.spans.some((s) => s.traceId === 'ab'.repeat(16))).to.equal(false);
      const ids = new Set(spans.map((s) => s.spanId));
      for (const s of spans) if (s.parentSpanId) expect(ids.has(s.parentSpanId), `${s.name}'s parent`).to.equal(true);
    });
  });
});
