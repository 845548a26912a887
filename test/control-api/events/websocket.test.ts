import { expect } from 'chai';
import { createFixture, createAgent } from '../../../testkit/api';
import { signToken, DIRECT_TOKEN_TTL_SEC } from '../../../core/credentials';
import { callsRepo, callJson } from '../../../core/repos/calls';
import { publishResourceEvent } from '../../../core/events/catalogue';
import { Permission } from '../../../core/permissions';
import { newId } from '../../../core/ids';
import { startWs, connect, settle, type WsHarness } from './support';

describe('WebSocket /v1.0/ws (real Redis stream)', function () {
  this.timeout(60_000);
  let h: WsHarness;
  before(async () => {
    h = await startWs({ maxBufferedBytes: 64 * 1024, pingIntervalMs: 60_000 });
  });
  after(async () => h.close());

  async function callLifecycle(customerId: string) {
    const calls = callsRepo(h.t.ctx.db);
    const call = await calls.create({
      customer_id: customerId,
      source: { type: 'tel', target: '+15550001111' },
      destination: { type: 'tel', target: '+15550002222' },
      direction: 'outgoing',
    });
    const types: string[] = [];
    const pub = async (type: 'call_created' | 'call_ringing' | 'call_progressing' | 'call_hangup', row: typeof call) => {
      await publishResourceEvent(h.publisher, type, callJson(row));
      types.push(type);
    };
    await pub('call_created', call);
    await pub('call_ringing', (await calls.transition(call.id, 'ringing')).call!);
    await pub('call_progressing', (await calls.transition(call.id, 'progressing')).call!);
    await pub('call_hangup', (await calls.hangup(call.id, 'normal_clearing')).call!);
    return { call, types };
  }

  it('delivers each event of a call once and in order to a wildcard subscriber, even with overlapping topics', async () => {
    const f = await createFixture(h.t.ctx);
    const c = await connect(h.url(`accesskey=${f.accesskey}`));
    const cid = f.customer.id;
    c.send({ type: 'subscribe', topics: [`customer_id:${cid}:call:*`, `customer_id:${cid}`, `customer_id:${cid}:call`] });
    await settle();
    const { call, types } = await callLifecycle(cid);
    await c.waitFor(4);
    await settle(300);
    expect(c.frames.map((m) => m.event_type)).to.deep.equal(types);
    for (const m of c.frames) {
      expect(m.topic).to.equal(`customer_id:${cid}:call:${call.id}`);
      expect(m.data.id).to.equal(call.id);
      expect(Number.isNaN(Date.parse(m.timestamp))).to.equal(false);
    }
    expect(c.frames[3]!.data.status).to.equal('hangup');
    c.socket.close();
  });

  it("does not leak another customer's events and stops after unsubscribe", async () => {
    const a = await createFixture(h.t.ctx);
    const b = await createFixture(h.t.ctx);
    const c = await connect(h.url(`token=${a.token}`));
    const topic = `customer_id:${a.customer.id}:call:*`;
    c.send({ type: 'subscribe', topics: [topic] });
    await settle();
    await callLifecycle(b.customer.id);
    await callLifecycle(a.customer.id);
    await c.waitFor(4);
    c.send({ type: 'unsubscribe', topics: [topic] });
    await settle();
    await callLifecycle(a.customer.id);
    await settle(300);
    expect(c.frames).to.have.length(4);
    expect(c.frames.every((m) => m.data.customer_id === a.customer.id)).to.equal(true);
    c.socket.close();
  });

  it('refuses a connection without or with bad credentials', async () => {
    let err = await connect(h.url('')).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('HTTP 401');
    err = await connect(h.url('token=not-a-jwt')).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.equal('HTTP 401');
  });

  it('lets a direct token subscribe to its own four-part topic only', async () => {
    const f = await createFixture(h.t.ctx);
    const rid = newId();
    const { token } = await signToken(
      h.t.ctx.config.jwtSecret,
      { typ: 'direct', customer_id: f.customer.id, resource_type: 'call', resource_id: rid, allowed_resource_id: rid, scope_version: 1 },
      DIRECT_TOKEN_TTL_SEC,
    );
    const ok = await connect(h.url(`token=${token}`));
    ok.send({ type: 'subscribe', topics: [`customer_id:${f.customer.id}:call:${rid}`] });
    await settle();
    await h.publisher.publish('call_updated', f.customer.id, rid, { id: rid, customer_id: f.customer.id });
    await ok.waitFor(1);
    ok.socket.close();

    for (const topic of [`customer_id:${f.customer.id}:call:*`, `customer_id:${f.customer.id}:call`, `customer_id:${f.customer.id}`, `customer_id:${f.customer.id}:call:${newId()}`]) {
      const c = await connect(h.url(`token=${token}`));
      c.send({ type: 'subscribe', topics: [topic] });
      const closed = await c.closed;
      expect(closed.code, topic).to.equal(1008);
    }
  });

  it('refuses customer-wide topics to a plain agent, another customer and malformed topics; allows agent_id for the agent itself', async () => {
    const f = await createFixture(h.t.ctx);
    const other = await createFixture(h.t.ctx);
    const agent = await createAgent(h.t.ctx, f.customer.id, Permission.CustomerAgent);
    const bad: [string, string][] = [
      [agent.token, `customer_id:${f.customer.id}:call:*`],
      [f.token, `customer_id:${other.customer.id}:call:*`],
      [f.token, `agent_id:${agent.agent.id}`],
      [f.token, 'customer_id:not-a-uuid'],
      [f.token, `customer_id:${f.customer.id}:call:not-a-uuid`],
      [f.token, `tenant:${f.customer.id}`],
    ];
    for (const [token, topic] of bad) {
      const c = await connect(h.url(`token=${token}`));
      c.send({ type: 'subscribe', topics: [topic] });
      expect((await c.closed).code, topic).to.equal(1008);
    }
    const notJson = await connect(h.url(`token=${f.token}`));
    notJson.socket.send('hello');
    expect((await notJson.closed).code).to.equal(1008);

    const c = await connect(h.url(`token=${agent.token}`));
    c.send({ type: 'subscribe', topics: [`agent_id:${agent.agent.id}`] });
    await settle();
    await h.publisher.publish('call_created', f.customer.id, newId(), { id: newId(), customer_id: f.customer.id, owner_type: 'agent', owner_id: newId() });
    await h.publisher.publish('agent_status_updated', f.customer.id, agent.agent.id, { id: agent.agent.id, customer_id: f.customer.id, status: 'available' });
    await c.waitFor(1);
    await settle(200);
    expect(c.frames.map((m) => m.event_type)).to.deep.equal(['agent_status_updated']);
    c.socket.close();
  });

  it('drops a client that does not read while another keeps receiving', async () => {
    const f = await createFixture(h.t.ctx);
    const topic = `customer_id:${f.customer.id}:call:*`;
    const slow = await connect(h.url(`accesskey=${f.accesskey}`));
    const fast = await connect(h.url(`accesskey=${f.accesskey}`));
    slow.send({ type: 'subscribe', topics: [topic] });
    fast.send({ type: 'subscribe', topics: [topic] });
    await settle();
    // Stop reading: the kernel buffers fill, then the server-side buffer passes the 64 KiB bound.
    (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const pad = 'x'.repeat(16 * 1024);
    const n = 600;
    const rid = newId();
    for (let i = 0; i < n; i++) {
      await h.publisher.publish('call_updated', f.customer.id, rid, { id: rid, customer_id: f.customer.id, seq: i, pad });
    }
    await fast.waitFor(n, 20_000);
    expect(fast.frames.map((m) => m.data.seq)).to.deep.equal([...Array(n).keys()]);
    expect(h.ws.hub.stats.dropped).to.be.greaterThan(0);
    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    expect(closed.code).to.equal(1006);
    expect(slow.frames.length).to.be.lessThan(n);
    fast.socket.close();
  });

  it('answers ping with pong and drops a socket that stops answering pings', async () => {
    const h2 = await startWs({ pingIntervalMs: 150 });
    try {
      const f = await createFixture(h2.t.ctx);
      const c = await connect(h2.url(`accesskey=${f.accesskey}`));
      let pings = 0;
      c.socket.on('ping', () => pings++);
      await settle(700);
      expect(pings).to.be.greaterThan(1);
      expect(c.socket.readyState).to.equal(c.socket.OPEN);
      // A client that no longer answers: ws answers pings automatically, so stop it at the socket.
      (c.socket as unknown as { _socket: { pause(): void } })._socket.pause();
      const closed = await Promise.race([c.closed.then(() => true), settle(3000).then(() => false)]);
      (c.socket as unknown as { _socket: { resume(): void } })._socket.resume();
      expect(closed || h2.ws.hub.stats.connections === 0).to.equal(true);
    } finally {
      await h2.close();
    }
  });
});
