// Events of a real call reach WebSocket subscribers: sipp calls a number through sip-server and
// media-app, media-app publishes each state change once, and control-api's /v1.0/ws delivers them,
// once each and in order, to the customer's wildcard subscriber and to nobody else.
import { expect } from 'chai';
import http from 'node:http';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { buildTestApp, createFixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { connect, settle } from '../control-api/events/support';
import { killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

describe("media-app → control-api WebSocket: a real call's events", function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let server: http.Server;
  let ws: WebSocketService;
  let url: (q: string) => string;

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    server = http.createServer(t.app);
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    ws = await attachWebSocket(server, t.ctx); // the real stream media-app publishes to (one prefix: one deployment)
    url = (q) => `ws://127.0.0.1:${port}/v1.0/ws?${q}`;
  });
  after(async () => {
    killAllSipp();
    await ws?.close();
    server?.closeAllConnections();
    server?.close();
    await t?.close();
    await p?.close();
  });

  it('a wildcard subscriber gets each call event once, in order; another customer gets none', async () => {
    const f = await createFixture(t.ctx);
    const other = await createFixture(t.ctx);
    const cid = f.customer.id;
    await trunksRepo(t.ctx.db).create(cid, `ws${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
    const flow = await flowsRepo(t.ctx.db).create({
      customer_id: cid,
      actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text: 'Events.', language: 'en-US' } }, { type: 'hangup' }]),
    } as never);
    const number = `+8991000009${String(Date.now()).slice(-2)}`;
    await numbersRepo(t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });

    const mine = await connect(url(`accesskey=${f.accesskey}`));
    const theirs = await connect(url(`accesskey=${other.accesskey}`));
    // overlapping topics: each event must still arrive once
    mine.send({ type: 'subscribe', topics: [`customer_id:${cid}:call:*`, `customer_id:${cid}`, `customer_id:${cid}:activeflow:*`] });
    theirs.send({ type: 'subscribe', topics: [`customer_id:${other.customer.id}`, `customer_id:${other.customer.id}:call:*`] });
    await settle(200);

    const sink = await RtpSink.open();
    try {
      const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1'], { killAfterMs: 30_000 }).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      sink.close();
    }
    const callFrames = () => mine.frames.filter((m) => m.event_type.startsWith('call_'));
    await until(() => callFrames().some((m) => m.event_type === 'call_hangup'), 10_000, 'call_hangup on the socket');
    await until(() => mine.frames.some((m) => m.event_type === 'activeflow_deleted' || (m.event_type === 'activeflow_updated' && m.data.status === 'ended')), 10_000, 'activeflow end on the socket');
    await settle(300);

    const calls = callFrames();
    expect(calls.map((m) => m.event_type)).to.deep.equal(['call_created', 'call_ringing', 'call_progressing', 'call_terminating', 'call_hangup']);
    const callId = calls[0]!.data.id as string;
    for (const m of calls) {
      expect(m.topic).to.equal(`customer_id:${cid}:call:${callId}`);
      expect(m.data.id).to.equal(callId);
    }
    expect(calls.map((m) => m.data.status)).to.deep.equal(['dialing', 'ringing', 'progressing', 'terminating', 'hangup']);
    const afFrames = mine.frames.filter((m) => m.event_type.startsWith('activeflow_'));
    expect(afFrames[0]!.event_type).to.equal('activeflow_created');
    expect(new Set(afFrames.map((m) => m.data.id))).to.have.property('size', 1);
    // nothing twice: every frame is a distinct (type, status, tm_update)
    const keys = mine.frames.map((m) => `${m.event_type}|${m.data.id}|${m.data.status}|${m.data.tm_update}`);
    expect(new Set(keys).size).to.equal(keys.length);
    expect(theirs.frames).to.deep.equal([]);
    mine.socket.close();
    theirs.socket.close();
  });
});
