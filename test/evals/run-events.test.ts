// An eval run's life as customer events (issue 56, docs/evals.md "Runs as events"): a real run of 2 calls
// over SIP (concurrency 1; the number's flow answers and hangs up) seen in order by the customer's webhook
// receiver (an HTTP server on loopback, through the egress policy as every webhook) and by a WebSocket
// subscriber: eval_run_created, eval_run_progressed per call, eval_run_finished with the run's summary.
// A run whose call the edge refuses ends eval_run_failed. Another customer's subscriber and webhook see nothing;
// its subscription to the first customer's run topic is refused ("topic of another customer").
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import pino from 'pino';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { type Platform } from '../../testkit/media-app/harness';
import { useLiveAiStack } from '../../testkit/ai/turn-calls';
import { loopbackTrunk } from '../../testkit/trunks';
import { listenHook, type HookReceiver } from '../../testkit/hook-receiver';
import { freePort } from '../../testkit/ports';
import { newId } from '../../core/ids';
import { loadEvalsConfig } from '../../evals/config';
import { EvalWorker } from '../../evals/worker';
import { storageBackend } from '../../core/storage/backend';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { eventStreamKey } from '../../core/events/bus';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { connect, settle, type Client } from '../control-api/events/support';
import { evalRunCreatedPayload, evalRunEndedPayload, evalRunProgressedPayload } from '../../core/evals/events';

interface Hooked {
  event_type: string;
  topic: string;
  data: Record<string, unknown>;
}

async function receiver(): Promise<HookReceiver<Hooked>> {
  const got: Hooked[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      got.push(JSON.parse(body) as Hooked);
      res.end('ok');
    });
  });
  return listenHook(server, got);
}

async function until(cond: () => boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('eval run events: webhook and WebSocket, in order, the customer its own only', function () {
  this.timeout(150_000);
  let p: Platform;
  let t: TestApp;
  let a: Fixture;
  let b: Fixture;
  let hooks: WebhookService;
  let ws: WebSocketService;
  let server: http.Server;
  let wsUrl: string;
  let worker: EvalWorker | undefined;
  const hookA: { r?: HookReceiver<Hooked> } = {};
  const hookB: { r?: HookReceiver<Hooked> } = {};
  useLiveAiStack('evals-events-', {}, (s) => ({ p } = s));

  before(async () => {
    // one deployment: the worker watches, and control-api reads, the platform's event stream (its prefix)
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    a = await createFixture(t.ctx);
    b = await createFixture(t.ctx);
    await loopbackTrunk(t.ctx.db, a.customer.id, `trevev${Date.now()}`);
    hookA.r = await receiver();
    hookB.r = await receiver();
    await t.ctx.db('customers').where({ id: a.customer.id }).update({ webhook_uri: hookA.r.url, webhook_method: 'POST' });
    await t.ctx.db('customers').where({ id: b.customer.id }).update({ webhook_uri: hookB.r.url, webhook_method: 'POST' });
    // a group and queue of its own: the stream is shared by every test process (test/architecture/stream-groups)
    hooks = await startWebhooks(t.ctx, { group: `run-events-${newId()}`, queue: `run-events-${newId()}`, baseDelayMs: 100, maxAttempts: 3 });
    server = http.createServer(t.app);
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    ws = await attachWebSocket(server, t.ctx, {});
    wsUrl = `ws://127.0.0.1:${port}/v1.0/ws`;
  });
  after(async () => {
    await worker?.close();
    await ws?.close();
    await hooks?.close();
    server?.closeAllConnections();
    if (server) await new Promise<void>((r) => server.close(() => r()));
    await hookA.r?.close();
    await hookB.r?.close();
    await t?.close();
  });

  async function runOn(number: string, actions: unknown[] | null, calls: number): Promise<string> {
    const flow = actions && (await flowsRepo(t.ctx.db).create({ customer_id: a.customer.id, actions: parseActions(actions) }));
    await numbersRepo(t.ctx.db).create({ customer_id: a.customer.id, number, type: 'virtual', ...(flow ? { call_flow_id: flow.id } : {}) });
    const s = await request(t.app)
      .post('/v1.0/eval_scenarios')
      .set('Authorization', `Bearer ${a.token}`)
      .send({ name: 'short', target: { type: 'number', target: number }, caller: { turns: [{ wait_ms: 3000 }, { hangup: true }] }, checks: [{ type: 'ended_by', by: 'agent' }] })
      .expect(200);
    const made = await request(t.app)
      .post('/v1.0/eval_runs')
      .set('Authorization', `Bearer ${a.token}`)
      .send({ scenario_ids: [s.body.id], calls, concurrency: 1 })
      .expect(200);
    if (!worker) {
      const config = loadEvalsConfig({ EVALS_SIP_EDGE: `127.0.0.1:${p.sipPort}`, EVALS_POLL_MS: '100', EVALS_SETTLE_MS: '5000', EVALS_ANSWER_TIMEOUT_MS: '10000' });
      worker = new EvalWorker({
        db: t.ctx.db,
        redis: t.ctx.redis,
        eventStream: eventStreamKey(t.ctx.config.redisKeyPrefix),
        config,
        storage: storageBackend(t.ctx.config).files,
        logger: pino({ level: 'silent' }),
      });
      worker.start();
    }
    return made.body.id as string;
  }

  const ofRun = (id: string) => (e: { topic: string }) => e.topic === `customer_id:${a.customer.id}:eval_run:${id}`;

  it('a run of 2 calls: created, progressed twice, finished with its summary; the same over the webhook; B sees nothing', async () => {
    const subA: Client = await connect(`${wsUrl}?accesskey=${a.accesskey}`);
    const subB: Client = await connect(`${wsUrl}?accesskey=${b.accesskey}`);
    subA.send({ type: 'subscribe', topics: [`customer_id:${a.customer.id}:eval_run:*`] });
    subB.send({ type: 'subscribe', topics: [`customer_id:${b.customer.id}`, `customer_id:${b.customer.id}:eval_run:*`] });
    // B asking for A's run events is refused: the socket closes saying why, and gets none of them
    const subBA: Client = await connect(`${wsUrl}?accesskey=${b.accesskey}`);
    subBA.send({ type: 'subscribe', topics: [`customer_id:${a.customer.id}:eval_run:*`] });
    let refused: { code: number; reason: string } | undefined;
    void subBA.closed.then((c) => (refused = c));
    await until(() => refused !== undefined, "B's subscription to A's topic refused", 5000);
    expect(refused).to.deep.equal({ code: 1008, reason: 'topic of another customer' });
    await settle();
    const id = await runOn('+899570000101', [{ type: 'answer' }, { type: 'sleep', option: { duration: 500 } }, { type: 'hangup' }], 2);
    const expected = ['eval_run_created', 'eval_run_progressed', 'eval_run_progressed', 'eval_run_finished'];
    await until(() => subA.frames.filter(ofRun(id)).length >= 4, 'the WebSocket subscriber got 4 events');
    await until(() => hookA.r!.got.filter(ofRun(id)).length >= 4, 'the webhook got 4 events');
    await settle(300);
    for (const seen of [subA.frames.filter(ofRun(id)), hookA.r!.got.filter(ofRun(id))]) {
      expect(seen.map((e) => e.event_type)).to.deep.equal(expected);
      const created = evalRunCreatedPayload.parse(seen[0]!.data);
      expect(created).to.include({ id, customer_id: a.customer.id, planned: 2, concurrency: 1 });
      const p1 = evalRunProgressedPayload.parse(seen[1]!.data);
      const p2 = evalRunProgressedPayload.parse(seen[2]!.data);
      expect([p1.done, p2.done]).to.deep.equal([1, 2]);
      for (const pr of [p1, p2]) expect(pr.call).to.include({ ended_by: 'agent', passed: true, checks_passed: 1, checks: 1 });
      expect(p1.call.sip_call_id).to.not.equal(p2.call.sip_call_id);
      const end = evalRunEndedPayload.parse(seen[3]!.data);
      expect(end).to.deep.include({ id, status: 'finished', error: '', calls: 2, passed: 2, pass_rate: 1 });
    }
    const run = await request(t.app).get(`/v1.0/eval_runs/${id}`).set('Authorization', `Bearer ${a.token}`).expect(200);
    expect(run.body.status).to.equal('finished');
    expect(subB.frames).to.deep.equal([]);
    expect(subBA.frames).to.deep.equal([]);
    expect(hookB.r!.got).to.deep.equal([]);
    subA.socket.close();
    subB.socket.close();
  });

  it('a run whose call the edge refuses: created, progressed, failed with the reason and a pass rate of 0', async () => {
    const subA = await connect(`${wsUrl}?accesskey=${a.accesskey}`);
    subA.send({ type: 'subscribe', topics: [`customer_id:${a.customer.id}:eval_run:*`] });
    await settle();
    const id = await runOn('+899570000102', null, 1);
    await until(() => subA.frames.filter(ofRun(id)).length >= 3, 'the WebSocket subscriber got 3 events');
    const seen = subA.frames.filter(ofRun(id));
    expect(seen.map((e) => e.event_type)).to.deep.equal(['eval_run_created', 'eval_run_progressed', 'eval_run_failed']);
    expect(evalRunProgressedPayload.parse(seen[1]!.data).call).to.include({ ended_by: 'refused', passed: false });
    expect(evalRunEndedPayload.parse(seen[2]!.data)).to.deep.include({ status: 'failed', error: '1 of 1 call(s) could not be placed or found', calls: 1, passed: 0, pass_rate: 0, latency: {} });
    subA.socket.close();
  });
});
