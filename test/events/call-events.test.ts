// A real call's events, end to end: sipp calls a number through sip-server and media-app, whose flow
// answers, records and hangs up. Every event media-app publishes (call_*, activeflow_*, recording_*)
// must reach a WebSocket subscriber on wildcard topics AND the customer's webhook receiver, each once,
// in the same order; an API activeflow's own events reach its own webhook. Nothing twice (no second
// call_hangup), no untyped event.
import { listenHook } from '../../testkit/hook-receiver';
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { isEventType } from '../../core/events/catalogue';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { verify, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../control-api/webhooks/sign';
import { closeCommandBus } from '../../control-api/calls/bus';
import { buildTestApp, createFixture, type TestApp, type Fixture } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { newId } from '../../core/ids';
import { connect, settle } from '../control-api/events/support';
import { killAllSipp, RtpSink, sipp, startPlatform, uacWaitsForBye, until, type Platform } from '../../testkit/media-app/harness';

interface Hook {
  event_type: string;
  topic: string;
  data: Record<string, unknown>;
  signed: boolean;
}

async function receiver(secret: () => string): Promise<{ url: string; got: Hook[]; close(): Promise<void> }> {
  const got: Hook[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const signed = verify(secret(), req.headers[SIGNATURE_HEADER.toLowerCase()] as string, req.headers[TIMESTAMP_HEADER.toLowerCase()] as string, body);
      got.push({ ...(JSON.parse(body) as Omit<Hook, 'signed'>), signed });
      res.writeHead(200).end('ok');
    });
  });
  return listenHook(server, got);
}

/** One line per event: type, resource, and what makes each change distinct. */
const key = (e: { event_type: string; data: Record<string, unknown> }) =>
  `${e.event_type}|${String(e.data.id)}|${String(e.data.status)}|${String(e.data.tm_update)}|${Array.isArray(e.data.executed_actions) ? e.data.executed_actions.length : ''}`;

describe("a real call's events: WebSocket and webhooks, once each, in order", function () {
  this.timeout(120_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let server: http.Server;
  let ws: WebSocketService;
  let hooks: WebhookService;
  let url: (q: string) => string;
  let secret = '';

  before(async function () {
    this.timeout(120_000);
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    // the webhook receivers are on loopback: opened explicitly
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, EGRESS_ALLOW_CIDRS: '127.0.0.0/8' } });
    server = http.createServer(t.app);
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    ws = await attachWebSocket(server, t.ctx);
    // its own queue and consumer group on the real stream: other suites' webhook readers are not involved
    hooks = await startWebhooks(t.ctx, { queue: `wh-events-${newId()}`, group: `wh-events-${newId()}`, baseDelayMs: 100 });
    url = (q) => `ws://127.0.0.1:${port}/v1.0/ws?${q}`;
    f = await createFixture(t.ctx);
    secret = ((await t.ctx.db('customers').where({ id: f.customer.id }).first('webhook_secret')) as { webhook_secret: string }).webhook_secret;
  });
  after(async () => {
    killAllSipp();
    await hooks?.close();
    await ws?.close();
    server?.closeAllConnections();
    server?.close();
    if (t) await closeCommandBus(t.ctx);
    await t?.close();
    await p?.close();
  });

  it('call, activeflow and recording events: the same sequence on the socket and at the webhook', async () => {
    const cid = f.customer.id;
    const hook = await receiver(() => secret);
    try {
      await t.ctx.db('customers').where({ id: cid }).update({ webhook_uri: hook.url, webhook_method: 'POST' });
      await trunksRepo(t.ctx.db).create(cid, `ev${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
      const flow = await flowsRepo(t.ctx.db).create({
        customer_id: cid,
        actions: parseActions([{ type: 'answer' }, { type: 'recording_start', option: { duration: 1 } }, { type: 'sleep', option: { duration: 1500 } }, { type: 'hangup' }]),
      } as never);
      const number = `+8991000008${String(Date.now()).slice(-2)}`;
      await numbersRepo(t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });

      const sock = await connect(url(`accesskey=${f.accesskey}`));
      // overlapping wildcard topics: each event must still arrive once
      sock.send({ type: 'subscribe', topics: [`customer_id:${cid}`, `customer_id:${cid}:call:*`, `customer_id:${cid}:activeflow:*`, `customer_id:${cid}:recording:*`] });
      await settle(200);

      const sink = await RtpSink.open();
      try {
        const r = await sipp(uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, 'pbx', sink.port), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mp', String(await sippMediaPort())], {
          killAfterMs: 40_000,
        }).done;
        expect(r.code, r.errors + r.messages).to.equal(0);
      } finally {
        sink.close();
      }
      const ended = (frames: { event_type: string; data: Record<string, unknown> }[]) =>
        frames.some((m) => m.event_type === 'call_hangup') &&
        frames.some((m) => m.event_type === 'recording_finished') &&
        frames.some((m) => m.event_type === 'activeflow_updated' && m.data.status === 'ended');
      await until(() => ended(sock.frames), 15_000, 'the call, recording and activeflow ends on the socket');
      await until(() => ended(hook.got), 20_000, 'the same at the webhook');
      await settle(1000); // a duplicate would arrive now

      const frames = sock.frames;
      for (const m of frames) expect(isEventType(m.event_type), m.event_type).to.equal(true);
      const calls = frames.filter((m) => m.event_type.startsWith('call_'));
      // the recording's start and end change the call's recording_id: each is a call_updated
      expect(calls.map((m) => m.event_type)).to.deep.equal(['call_created', 'call_ringing', 'call_progressing', 'call_updated', 'call_updated', 'call_terminating', 'call_hangup']);
      expect(calls.map((m) => m.data.status)).to.deep.equal(['dialing', 'ringing', 'progressing', 'progressing', 'progressing', 'terminating', 'hangup']);
      const callId = calls[0]!.data.id as string;
      const recordingId = frames.find((m) => m.event_type === 'recording_started')?.data.id;
      expect(calls.slice(3, 5).map((m) => m.data.recording_id)).to.deep.equal([recordingId, '00000000-0000-0000-0000-000000000000']);
      expect(frames.filter((m) => m.event_type.startsWith('recording_')).map((m) => [m.event_type, m.data.reference_id, m.topic.split(':')[2]])).to.deep.equal([
        ['recording_started', callId, 'recording'],
        ['recording_finished', callId, 'recording'],
      ]);
      const af = frames.filter((m) => m.event_type.startsWith('activeflow_'));
      expect(af[0]!.event_type).to.equal('activeflow_created');
      expect(new Set(af.map((m) => m.data.id)).size).to.equal(1);
      expect(af.map((m) => m.topic)).to.satisfy((ts: string[]) => ts.every((x) => x === `customer_id:${cid}:activeflow:${af[0]!.data.id}`));
      // once each: no two frames describe the same change
      const keys = frames.map(key);
      expect(new Set(keys).size, keys.join('\n')).to.equal(keys.length);
      // the webhook saw exactly the socket's sequence (order kept per customer), every delivery signed
      expect(hook.got.map(key)).to.deep.equal(keys);
      expect(hook.got.map((h) => h.topic)).to.deep.equal(frames.map((m) => m.topic));
      expect(
        hook.got.every((h) => h.signed),
        'signed with the customer secret',
      ).to.equal(true);
      sock.socket.close();
    } finally {
      await t.ctx.db('customers').where({ id: cid }).update({ webhook_uri: '' });
      await hook.close();
    }
  });

  it("an API activeflow's own events reach its own webhook, once each, in order", async () => {
    const own = await receiver(() => secret);
    try {
      const r = await request(t.app)
        .post('/v1.0/activeflows')
        .query({ accesskey: f.accesskey })
        .send({
          actions: [
            { type: 'variable_set', option: { key: 'a', value: '1' } },
            { type: 'sleep', option: { duration: 200 } },
          ],
          webhook_uri: own.url,
          webhook_method: 'POST',
        });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const id = r.body.id as string;
      await until(() => own.got.some((h) => h.event_type === 'activeflow_updated' && h.data.status === 'ended'), 20_000, 'activeflow end at its webhook');
      await settle(800);
      const got = own.got;
      expect(got[0]!.event_type).to.equal('activeflow_created');
      expect(got.every((h) => h.data.id === id && h.topic === `customer_id:${f.customer.id}:activeflow:${id}` && h.signed)).to.equal(true);
      const keys = got.map(key);
      expect(new Set(keys).size, keys.join('\n')).to.equal(keys.length);
      const counts = got.map((h) => (h.data.executed_actions as unknown[]).length);
      expect(counts, 'in order').to.deep.equal([...counts].sort((a, b) => a - b));
      expect(got.filter((h) => h.data.status === 'ended')).to.have.length(1);
    } finally {
      await own.close();
    }
  });
});
