/**
 * Review: an open /v1.0/ws socket kept the permission its agent had when it connected. REST reads
 * the agent's current permission on every request, but a manager demoted to a plain agent kept
 * receiving every customer-wide event (calls, recordings, messages of all agents) on its socket
 * until the login token expired. The socket is now closed (1008 "agent permission changed") when
 * the agent's permission differs from the one it was admitted with. Real control-api on loopback.
 */
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { WebSocket } from 'ws';
import { buildTestApp, createAgent, createFixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { EventPublisher } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';

describe('security review: a demoted agent loses its customer-wide WebSocket', function () {
  this.timeout(30_000);
  let t: TestApp;
  let ws: WebSocketService;
  let server: http.Server;
  let publisher: EventPublisher;
  let port: number;
  const stream = `test-review-ws-${newId()}`;

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    server = http.createServer(t.app);
    port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    ws = await attachWebSocket(server, t.ctx, { stream, recheckMs: 1000 });
    publisher = new EventPublisher(t.ctx.redis, stream);
  });
  after(async () => {
    await ws?.close();
    await t?.ctx.redis.del(stream);
    server?.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await t?.close();
  });

  it('demoting a manager closes its socket; it gets no customer-wide event after', async () => {
    const f = await createFixture(t.ctx);
    const m = await createAgent(t.ctx, f.customer.id, Permission.CustomerManager);
    const socket = new WebSocket(`ws://127.0.0.1:${port}/v1.0/ws?token=${m.token}`);
    const frames: { type?: string; event_type?: string }[] = [];
    socket.on('message', (d) => frames.push(JSON.parse(d.toString()) as { type?: string }));
    const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'subscribe', topics: [`customer_id:${f.customer.id}`] }));
    await new Promise((r) => setTimeout(r, 200));
    await request(t.app).put(`/v1.0/agents/${m.agent.id}/permission`).set('Authorization', `Bearer ${f.token}`).send({ permission: Permission.CustomerAgent }).expect(200);
    // REST already refuses the customer-wide view
    const rest = await request(t.app).get('/v1.0/calls').set('Authorization', `Bearer ${m.token}`);
    expect(rest.status).to.equal(403);
    const c = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
    const rid = newId();
    await publisher.publish('call_updated', f.customer.id, rid, { id: rid, customer_id: f.customer.id });
    await new Promise((r) => setTimeout(r, 300));
    expect(
      frames.filter((x) => x.event_type === 'call_updated'),
      'a customer-wide event reached the demoted agent',
    ).to.have.length(0);
    expect(c).to.deep.equal({ code: 1008, reason: 'agent permission changed' });
    socket.terminate();
  });
});
