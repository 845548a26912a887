/**
 * Finding 6: every authenticated WebSocket of control-api (/v1.0/ws, the agent socket, media
 * streams) passes the account status gate at upgrade, and an open socket is closed (1008) within
 * 5 s when its accesskey is deleted or expires, its JWT expires, its agent is deleted, or the
 * account is frozen or deleted. Real control-api HTTP server on loopback, real Redis, `ws` clients.
 */
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { WebSocket } from 'ws';
import { buildTestApp, createAgent, createFixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { workspaceAttachment } from '../../control-api/service-agents/attachment';
import { attachment as mediaStreams } from '../../control-api/media-streams/attachment';
import { EventPublisher } from '../../core/events/bus';
import { signToken } from '../../core/credentials';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';

interface Server {
  t: TestApp;
  ws: WebSocketService;
  publisher: EventPublisher;
  url(path: string, query: string): string;
  close(): Promise<void>;
}

/** control-api on a loopback port with /v1.0/ws, the agent socket and media streams. */
async function startServer(recheckMs?: number): Promise<Server> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  const stream = `test-ws-gates-${newId()}`;
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ws = await attachWebSocket(server, t.ctx, { stream, recheckMs });
  const agent = await workspaceAttachment({ stream, recheckMs }).start(server, t.ctx);
  const media = await mediaStreams.start(server, t.ctx);
  return {
    t,
    ws,
    publisher: new EventPublisher(t.ctx.redis, stream),
    url: (path, query) => `ws://127.0.0.1:${port}${path}?${query}`,
    async close() {
      await media.close();
      await agent.close();
      await ws.close();
      await t.ctx.redis.del(stream);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

const EVENTS = '/v1.0/ws';
const AGENT = '/v1.0/service_agents/ws';

/** The refused upgrade's status and error reason (the error envelope). */
function refusal(url: string): Promise<{ status: number; reason: string | undefined }> {
  return new Promise((resolve, reject) => {
    const s = new WebSocket(url);
    s.once('open', () => {
      s.close();
      reject(new Error('upgrade accepted'));
    });
    s.once('error', () => undefined);
    s.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        let reason: string | undefined;
        try {
          reason = (JSON.parse(body) as { error?: { reason?: string } }).error?.reason;
        } catch {
          reason = undefined;
        }
        resolve({ status: res.statusCode ?? 0, reason });
      });
    });
  });
}

interface Open {
  socket: WebSocket;
  frames: unknown[];
  closed: Promise<{ code: number; reason: string }>;
}

async function open(url: string): Promise<Open> {
  const socket = new WebSocket(url);
  const frames: unknown[] = [];
  socket.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return { socket, frames, closed };
}

/** The close, or a failure when the socket stays open `ms` past this call (made right after the revocation). */
async function closedWithin(o: Open, ms: number): Promise<{ code: number; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`socket still open after ${ms} ms`)), ms)));
  try {
    return await Promise.race([o.closed, timeout]);
  } finally {
    clearTimeout(timer);
    if (o.socket.readyState === o.socket.OPEN) o.socket.terminate();
  }
}

const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));

describe('security: WebSocket status gate and revocation (finding 6)', function () {
  this.timeout(60_000);

  describe('at upgrade', () => {
    let s: Server;
    before(async () => (s = await startServer()));
    after(async () => s.close());

    for (const [status, reason] of [
      ['frozen', 'ACCOUNT_FROZEN'],
      ['expired', 'ACCOUNT_EXPIRED'],
      ['deleted', 'ACCOUNT_DELETED'],
    ] as const) {
      it(`refuses a ${status} account on every socket with 403 ${reason}, as REST does`, async () => {
        const f = await createFixture(s.t.ctx, { status });
        const rest = await request(s.t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
        expect([rest.status, rest.body.error?.reason]).to.deep.equal([403, reason]);
        expect(await refusal(s.url(EVENTS, `accesskey=${f.accesskey}`))).to.deep.equal({ status: 403, reason });
        expect(await refusal(s.url(EVENTS, `token=${f.token}`))).to.deep.equal({ status: 403, reason });
        expect(await refusal(s.url(AGENT, `token=${f.token}`))).to.deep.equal({ status: 403, reason });
        const media = `/v1.0/calls/${newId()}/media_stream`;
        expect(await refusal(s.url(media, `token=${f.token}&encapsulation=rtp`))).to.deep.equal({ status: 403, reason });
      });
    }

    it('still admits an active account (and bad credentials stay 401)', async () => {
      const f = await createFixture(s.t.ctx);
      const o = await open(s.url(EVENTS, `accesskey=${f.accesskey}`));
      o.socket.close();
      expect((await refusal(s.url(EVENTS, 'accesskey=nope'))).status).to.equal(401);
    });
  });

  describe('announced revocations (Redis channel; backstop pass off)', () => {
    let s: Server;
    before(async () => (s = await startServer(600_000)));
    after(async () => s.close());

    it('closes a /v1.0/ws socket when its accesskey is deleted, and it gets no event after', async () => {
      const f = await createFixture(s.t.ctx);
      const o = await open(s.url(EVENTS, `accesskey=${f.accesskey}`));
      const rid = newId();
      o.socket.send(JSON.stringify({ type: 'subscribe', topics: [`customer_id:${f.customer.id}`] }));
      await settle();
      await request(s.t.app).delete(`/v1.0/accesskeys/${f.accesskeyRow.id}`).query({ token: f.token }).expect(200);
      const c = await closedWithin(o, 5000);
      expect(c.code).to.equal(1008);
      expect(c.reason).to.equal('accesskey deleted');
      await s.publisher.publish('call_updated', f.customer.id, rid, { id: rid, customer_id: f.customer.id });
      await settle(300);
      expect(o.frames).to.have.length(0);
    });

    it('closes every socket of an account frozen through POST /auth/unregister', async () => {
      const f = await createFixture(s.t.ctx);
      const a = await createAgent(s.t.ctx, f.customer.id, Permission.CustomerAgent);
      const events = await open(s.url(EVENTS, `token=${f.token}`));
      const agent = await open(s.url(AGENT, `token=${a.token}`));
      await request(s.t.app).post('/auth/unregister').set('Authorization', `Bearer ${f.token}`).send({ password: f.password }).expect(200);
      for (const o of [events, agent]) {
        const c = await closedWithin(o, 5000);
        expect([c.code, c.reason]).to.deep.equal([1008, 'ACCOUNT_FROZEN']);
      }
    });

    it('closes the agent socket of a deleted agent', async () => {
      const f = await createFixture(s.t.ctx);
      const a = await createAgent(s.t.ctx, f.customer.id, Permission.CustomerAgent);
      const o = await open(s.url(AGENT, `token=${a.token}`));
      await request(s.t.app).delete(`/v1.0/agents/${a.agent.id}`).query({ accesskey: f.accesskey }).expect(200);
      const c = await closedWithin(o, 5000);
      expect([c.code, c.reason]).to.deep.equal([1008, 'agent deleted']);
    });
  });

  describe('unannounced changes and expiry (default backstop pass)', () => {
    let s: Server;
    before(async () => (s = await startServer()));
    after(async () => s.close());

    it('closes sockets within 5 s of a status change written straight to the database', async () => {
      for (const [status, reason] of [
        ['frozen', 'ACCOUNT_FROZEN'],
        ['deleted', 'ACCOUNT_DELETED'],
      ] as const) {
        const f = await createFixture(s.t.ctx);
        const events = await open(s.url(EVENTS, `accesskey=${f.accesskey}`));
        const agent = await open(s.url(AGENT, `token=${f.token}`));
        await s.t.ctx.repos.customers.update(f.customer.id, { status });
        for (const o of [events, agent]) {
          const c = await closedWithin(o, 5000);
          expect([c.code, c.reason]).to.deep.equal([1008, reason]);
        }
      }
    });

    it('closes a socket when its JWT or its accesskey expires', async () => {
      const f = await createFixture(s.t.ctx);
      const { token } = await signToken(s.t.ctx.config.jwtSecret, { typ: 'login', sub: f.admin.id, customer_id: f.customer.id }, 2);
      const { token: key } = await s.t.ctx.repos.accesskeys.create({ customer_id: f.customer.id, name: 'short', expireSec: 2 });
      const byJwt = await open(s.url(EVENTS, `token=${token}`));
      const agent = await open(s.url(AGENT, `token=${token}`));
      const byKey = await open(s.url(EVENTS, `accesskey=${key}`));
      expect(await closedWithin(byJwt, 5000)).to.include({ code: 1008, reason: 'token expired' });
      expect(await closedWithin(agent, 5000)).to.include({ code: 1008, reason: 'token expired' });
      expect(await closedWithin(byKey, 5000)).to.include({ code: 1008, reason: 'accesskey expired' });
    });
  });
});
