// POST /v1.0/flows/{id}/simulate and /v1.0/flows/simulate: a real control-api puts the job on the shared
// queue in Redis, a real media-app flow simulator service (the subsystem's worker) runs it, and the
// answer is what simulate() gives for the same flow and script. Bad scripts, other customers' flows,
// no media-app, a media-app that does not answer, and HTTP in a simulation (never sent).
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { closeCommandBus, commandBus } from '../../control-api/calls/bus';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { FLOW_SIMULATE_QUEUE } from '../../core/commands/simulate';
import { runSimulateJob, startSimulatorService, type SimulatorService } from '../../media-app/flow/simulator/service';
import { simulate, type SimResult } from '../../media-app/flow/simulator/simulate';
import { normalizeSim } from './simulate-support';

const LOOPBACK = { EGRESS_ALLOW_CIDRS: '127.0.0.0/8' };
const SALES = 'a0000000-0000-4000-8000-000000000009';
const IVR = [
  { type: 'answer' },
  { type: 'talk', option: { text: 'Press 1 for sales, 2 for support.', language: 'en-US' } },
  { type: 'digits_receive', option: { duration: 4000, length: 1 } },
  { type: 'branch', option: { default_target_id: '', target_ids: { '1': SALES } } },
  { type: 'talk', option: { text: 'Goodbye.' } },
  { type: 'hangup' },
  { id: SALES, type: 'talk', option: { text: 'Sales, for ${who}.' } },
  { type: 'recording_start', option: { end_of_silence: 2, duration: 30 } },
  { type: 'sleep', option: { duration: 20000 } },
];
const SCRIPT = { events: [{ at: 2500, dtmf: '1' }], speech: [{ at: 4500, duration: 1500 }], variables: { who: 'test' } };

describe('flow simulations through the API, run by a media-app node (POST /flows/{id}/simulate)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let f: Fixture;
  let other: Fixture;
  let service: SimulatorService | null = null;
  const egress = new EgressPolicy(egressSettingsFromEnv(LOOPBACK));
  const post = (p: string, body: unknown, key = f.accesskey) =>
    request(t.app)
      .post(`/v1.0${p}`)
      .query({ accesskey: key })
      .send(body as object);
  const startService = () => (service = startSimulatorService({ redisUrl: t.ctx.config.redisUrl, keyPrefix: t.ctx.config.redisKeyPrefix, egress, logger: { warn: () => undefined } }));

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', FLOW_SIMULATE_TIMEOUT_MS: '4000', ...LOOPBACK } });
    f = await createFixture(t.ctx);
    other = await createFixture(t.ctx);
    startService();
  });
  after(async () => {
    await service?.close();
    await commandBus(t.ctx)
      .queue(FLOW_SIMULATE_QUEUE)
      .obliterate({ force: true })
      .catch(() => undefined);
    await closeCommandBus(t.ctx);
    await t.close();
  });

  it('a saved flow: the answer is the simulate() result for the same flow and script', async () => {
    const flow = (await post('/flows', { name: 'IVR', actions: IVR })).body as { id: string; actions: unknown[] };
    const res = await post(`/flows/${flow.id}/simulate`, SCRIPT);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const local = await simulate({ id: flow.id, actions: flow.actions }, SCRIPT, { sendHttp: false, egress, customerId: f.customer.id });
    expect(normalizeSim(res.body)).to.deep.equal(normalizeSim(local));
    const r = res.body as SimResult;
    expect(r.outcome).to.equal('done');
    // the path: the branch on the digit 1 went to the sales step; the recording ended on the caller's silence
    const actions = r.timeline.filter((e) => e.event === 'action').map((e) => e.type);
    expect(actions).to.deep.equal(['answer', 'talk', 'digits_receive', 'branch', 'talk', 'recording_start', 'sleep']);
    expect(r.timeline.find((e) => e.event === 'digits_received')).to.include({ digits: '1' });
    expect(r.timeline.find((e) => e.command === 'talk' && e.t === 2500)).to.include({ text: 'Sales, for test.' });
    expect(r.timeline.find((e) => e.event === 'speech')).to.include({ t: 4500, duration_ms: 1500 });
    expect(r.timeline.find((e) => e.command === 'recording_stop')).to.include({ cause: 'silence', t: 8000 });
    expect(r.activeflows[0]).to.include({ flow_id: flow.id, customer_id: f.customer.id });
  });

  it('inline actions (an unsaved edit) give the same path as the saved flow', async () => {
    const flow = (await post('/flows', { name: 'IVR', actions: IVR })).body as { id: string };
    const saved = (await post(`/flows/${flow.id}/simulate`, SCRIPT)).body as SimResult;
    const res = await post('/flows/simulate', { actions: IVR, ...SCRIPT });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const path = (r: SimResult) => r.timeline.map((e) => [e.t, e.event, e.type ?? e.command ?? '']);
    expect(path(res.body as SimResult)).to.deep.equal(path(saved));
  });

  it("the flows a simulated flow reaches (on_complete_flow_id, fetch_flow) are the customer's saved ones", async () => {
    const next = (await post('/flows', { name: 'next', actions: [{ type: 'talk', option: { text: 'second flow' } }] })).body as { id: string };
    const res = await post('/flows/simulate', { actions: [{ type: 'talk', option: { text: 'first' } }], on_complete_flow_id: next.id });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const talks = (res.body as SimResult).timeline.filter((e) => e.command === 'talk').map((e) => e.text);
    expect(talks).to.deep.equal(['first', 'second flow']);
    // another customer's flow is not reachable: fetch_flow names a flow the simulation cannot load
    const theirs = (await post('/flows', { name: 'theirs', actions: [{ type: 'talk', option: { text: 'secret' } }] }, other.accesskey)).body as { id: string };
    const res2 = await post('/flows/simulate', { actions: [{ type: 'fetch_flow', option: { flow_id: theirs.id } }] });
    expect(res2.status).to.equal(200);
    expect((res2.body as SimResult).timeline.some((e) => e.text === 'secret')).to.equal(false);
    expect((res2.body as SimResult).activeflows[0]).to.include({ end_reason: 'error' });
  });

  it('a bad script, a bad action and an unknown field are refused with 400 in the envelope', async () => {
    const flow = (await post('/flows', { actions: IVR })).body as { id: string };
    const bad = await post(`/flows/${flow.id}/simulate`, { events: [{ at: 0, dtmf: 'xyz' }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.include({ status: 'INVALID_ARGUMENT', reason: 'INVALID_ARGUMENT' });
    expect(bad.body.error.details[0].field).to.equal('events.0.dtmf');
    const unknown = await post(`/flows/${flow.id}/simulate`, { evnts: [] });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.details[0]).to.include({ field: 'evnts', issue: 'unknown field' });
    const tooMany = await post(`/flows/${flow.id}/simulate`, { events: Array.from({ length: 201 }, (_, i) => ({ at: i, dtmf: '1' })) });
    expect(tooMany.status).to.equal(400);
    const badAction = await post('/flows/simulate', { actions: [{ type: 'sleep', option: { duration: 'x' } }] });
    expect(badAction.status).to.equal(400);
    expect(badAction.body.error.details[0]).to.include({ field: 'actions[0].option.duration', index: 0 });
    const badFlowInScript = await post('/flows/simulate', { actions: [{ type: 'answer' }], flows: [{ id: SALES, actions: [{ type: 'nope' }] }] });
    expect(badFlowInScript.status).to.equal(400);
    expect(badFlowInScript.body.error.message).to.match(/script\.flows\[0\]\.actions/);
    const noBody = await request(t.app).post('/v1.0/flows/simulate').query({ accesskey: f.accesskey }).send({});
    expect(noBody.status).to.equal(400);
    expect(noBody.body.error.details[0]).to.include({ field: 'actions', issue: 'required' });
  });

  it('a job over 2 MiB (the flow with the saved flows it reaches) is refused with 400 before it is queued', async () => {
    const big = (n: number) => Array.from({ length: 900 }, (_, i) => ({ type: 'talk', option: { text: `${n}:${i} ${'x'.repeat(900)}` } }));
    let next = '';
    for (const n of [1, 2]) {
      const res = await post('/flows', { actions: big(n), ...(next ? { on_complete_flow_id: next } : {}) });
      expect(res.status).to.equal(200);
      next = (res.body as { id: string }).id;
    }
    const res = await post('/flows/simulate', { actions: big(3), on_complete_flow_id: next });
    expect(res.status).to.equal(400);
    expect(res.body.error.message).to.match(/over 2097152 bytes/);
    // each alone is simulated
    expect((await post(`/flows/${next}/simulate`, { max_ms: 1000 })).status).to.equal(200);
  });

  it("another customer's flow is 404 FLOW_NOT_FOUND, as on GET; an unknown id too", async () => {
    const flow = (await post('/flows', { actions: IVR })).body as { id: string };
    const res = await post(`/flows/${flow.id}/simulate`, SCRIPT, other.accesskey);
    expect(res.status).to.equal(404);
    expect(res.body.error).to.include({ reason: 'FLOW_NOT_FOUND' });
    expect((await post('/flows/00000000-0000-4000-8000-00000000abcd/simulate', {})).status).to.equal(404);
    await request(t.app).delete(`/v1.0/flows/${flow.id}`).query({ accesskey: f.accesskey }).expect(200);
    expect((await post(`/flows/${flow.id}/simulate`, {})).status).to.equal(404);
  });

  it("nothing is sent over HTTP: webhook_send and fetch are written as http_not_sent; fetch takes the script's answer", async () => {
    let hits = 0;
    const server = http.createServer((req, res) => {
      hits++;
      res.end('[]');
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    try {
      const base = `http://127.0.0.1:${port}`;
      const actions = [
        { type: 'webhook_send', option: { sync: true, uri: `${base}/hook`, method: 'POST', data: '{"who":"${who}"}' } },
        { type: 'fetch', option: { event_url: `${base}/actions`, event_method: 'POST' } },
        { type: 'talk', option: { text: 'after fetch' } },
      ];
      const answers = [{ url: `${base}/actions*`, body: JSON.stringify([{ type: 'talk', option: { text: 'fetched ${who}' } }]) }];
      const res = await post('/flows/simulate', { actions, variables: { who: 'bob' }, http: answers });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const r = res.body as SimResult;
      const notSent = r.timeline.filter((e) => e.event === 'http_not_sent');
      expect(notSent.map((e) => [e.method, e.url])).to.deep.equal([
        ['POST', `${base}/hook`],
        ['POST', `${base}/actions`],
      ]);
      expect(notSent[0]).to.include({ answer: null });
      expect(r.timeline.find((e) => e.event === 'webhook_failed')).to.include({ error: 'not sent in a simulation' });
      expect(r.timeline.filter((e) => e.command === 'talk').map((e) => e.text)).to.deep.equal(['fetched bob', 'after fetch']);
      expect(hits).to.equal(0);
    } finally {
      server.close();
    }
  });

  it("a node's egress policy still judges the URL: a refused one is shown refused, and nothing is sent", async () => {
    const strict = new EgressPolicy(egressSettingsFromEnv({}));
    const r = await runSimulateJob(
      { customerId: f.customer.id, flow: { actions: [{ type: 'webhook_send', option: { sync: true, uri: 'http://127.0.0.1:9/x' } }] }, script: {}, deadline: Date.now() + 5000 },
      strict,
    );
    expect(r.ok).to.equal(true);
    const timeline = r.ok ? (r.result.timeline as { event: string; refused?: string }[]) : [];
    expect(timeline.find((e) => e.event === 'http_not_sent')?.refused).to.match(/loopback/);
  });

  it("a script cannot raise the node's limits", async () => {
    const loop = [
      { id: SALES, type: 'sleep', option: { duration: 10 } },
      { type: 'goto', option: { target_id: SALES, loop_count: 1_000_000 } },
    ];
    const r = await runSimulateJob(
      { customerId: f.customer.id, flow: { actions: loop }, script: { limits: { maxLoopCount: 1_000_000, maxExecutedActions: 1_000_000 } }, deadline: Date.now() + 5000 },
      egress,
    );
    expect(r.ok).to.equal(true);
    const timeline = r.ok ? (r.result.timeline as { event: string }[]) : [];
    // maxLoopCount 100: the sleep runs 101 times, then the flow goes past the goto and ends
    expect(timeline.filter((e) => e.event === 'action').length).to.be.at.most(203);
    const expired = await runSimulateJob({ customerId: f.customer.id, flow: { actions: loop }, script: {}, deadline: Date.now() - 1 }, egress);
    expect(expired).to.deep.include({ ok: false });
  });

  it("the answer comes from the queue's events: control-api reads nothing of the job while it waits, and answers once the node does", async () => {
    const flow = (await post('/flows', { actions: [{ type: 'answer' }, { type: 'hangup' }] })).body as { id: string };
    // the test's own view of the queue, on connections of its own (control-api's is watched below)
    const own = new Redis(t.ctx.config.redisUrl, { maxRetriesPerRequest: 2 });
    const queue = new Queue(FLOW_SIMULATE_QUEUE, { connection: own, prefix: `${t.ctx.config.redisKeyPrefix}bull` });
    // Redis MONITOR on a plain socket: one line per command any client runs, with the client's address
    const url = new URL(t.ctx.config.redisUrl);
    const monitor = net.connect(Number(url.port || 6379), url.hostname);
    await once(monitor, 'connect');
    if (url.password) monitor.write(`AUTH ${decodeURIComponent(url.username || 'default')} ${decodeURIComponent(url.password)}\r\n`);
    monitor.write('MONITOR\r\n');
    const apiPort = t.ctx.redis.stream.localPort;
    const apiReads: string[] = [];
    let watching = false;
    let partial = '';
    monitor.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\r\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (watching && l.includes(`127.0.0.1:${apiPort}]`) && l.includes(`:${FLOW_SIMULATE_QUEUE}:`)) apiReads.push(l);
    });
    await queue.pause();
    try {
      const pending = post(`/flows/${flow.id}/simulate`, {}).then((x) => x);
      const queuedBy = Date.now() + 3000;
      while ((await queue.getWaitingCount()) === 0 && Date.now() < queuedBy) await new Promise((r) => setTimeout(r, 20));
      expect(await queue.getWaitingCount(), 'the job is queued').to.equal(1);
      watching = true;
      await new Promise((r) => setTimeout(r, 1200));
      watching = false;
      // polling read the job every 25-200 ms; the events need no read at all
      expect(apiReads, JSON.stringify(apiReads.slice(0, 3))).to.deep.equal([]);
      await queue.resume();
      const resumed = Date.now();
      const res = await pending;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((res.body as SimResult).outcome).to.equal('done');
      expect(Date.now() - resumed).to.be.below(2000);
    } finally {
      await queue.resume();
      monitor.destroy();
      await queue.close();
      own.disconnect();
    }
  });

  it('a node that takes no job (the queue paused): 503 REQUEST_TIMEOUT after the wait, the job withdrawn; a third simulation at once: 429', async () => {
    const flow = (await post('/flows', { actions: IVR })).body as { id: string };
    const queue = commandBus(t.ctx).queue(FLOW_SIMULATE_QUEUE);
    await queue.pause();
    try {
      const started = Date.now();
      // (supertest sends on then())
      const waiting = [post(`/flows/${flow.id}/simulate`, SCRIPT), post(`/flows/${flow.id}/simulate`, SCRIPT)].map((r) => r.then((x) => x));
      await new Promise((r) => setTimeout(r, 500));
      const third = await post(`/flows/${flow.id}/simulate`, SCRIPT);
      expect(third.status, JSON.stringify(third.body)).to.equal(429);
      expect(third.body.error).to.include({ reason: 'RATE_LIMIT_EXCEEDED' });
      expect(third.headers['retry-after']).to.equal('1');
      for (const res of await Promise.all(waiting)) {
        expect(res.status).to.equal(503);
        expect(res.body.error).to.include({ status: 'UNAVAILABLE', reason: 'REQUEST_TIMEOUT' });
      }
      expect(Date.now() - started).to.be.within(3900, 8000);
      const counts = await queue.getJobCounts('wait', 'active', 'prioritized');
      expect(counts.wait + counts.active + counts.prioritized).to.equal(0);
    } finally {
      await queue.resume();
    }
    // once the waits are over, the customer may simulate again
    expect((await post(`/flows/${flow.id}/simulate`, SCRIPT)).status).to.equal(200);
  });

  it('no media-app node running the simulator: 503 SERVICE_UNAVAILABLE at once', async () => {
    const flow = (await post('/flows', { actions: IVR })).body as { id: string };
    await service!.close();
    service = null;
    const started = Date.now();
    const none = await post(`/flows/${flow.id}/simulate`, SCRIPT);
    expect(none.status).to.equal(503);
    expect(none.body.error).to.include({ reason: 'SERVICE_UNAVAILABLE', message: 'no media-app node is running the flow simulator' });
    expect(Date.now() - started).to.be.below(2000);
  });
});
