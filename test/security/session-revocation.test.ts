/**
 * Issue 32 item 13: sign-out, a password change and an account freeze end sessions on the server.
 * Real control-api HTTP servers on loopback (two "nodes" sharing Postgres and Redis), production-like
 * credential caches (cacheTtlMs well above the test's steps on the node that revokes), `ws` clients
 * on /v1.0/ws.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { WebSocket } from 'ws';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { upgradeStatus } from '../support/ws-upgrade';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';
import { issueResetToken } from '../../control-api/auth/reset-tokens';

interface Node {
  t: TestApp;
  ws: WebSocketService;
  wsUrl(query: string): string;
  close(): Promise<void>;
}

/** control-api with /v1.0/ws on a loopback port; `prefix` shared between nodes of one platform. */
async function startNode(prefix: string, cacheTtlMs: number): Promise<Node> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: prefix }, app: { cacheTtlMs } });
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ws = await attachWebSocket(server, t.ctx, { stream: `test-sessions-${newId()}`, recheckMs: 60_000 });
  return {
    t,
    ws,
    wsUrl: (query) => `ws://127.0.0.1:${port}/v1.0/ws?${query}`,
    async close() {
      await ws.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

async function openSocket(url: string): Promise<{ socket: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(url);
  const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, closed };
}

async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('security: sessions end on the server (issue 32 item 13)', function () {
  this.timeout(60_000);
  let a: Node; // the node the client signs out on: caches a minute
  let b: Node; // another node: the default one-second cache window
  let f: Fixture;

  before(async () => {
    const prefix = `t${process.pid}_${randomBytes(4).toString('hex')}:`;
    a = await startNode(prefix, 60_000);
    b = await startNode(prefix, 1000);
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });
  beforeEach(async () => {
    f = await createFixture(a.t.ctx);
  });

  const login = async (node: Node = a, password = f.password): Promise<string> => {
    const res = await request(node.t.app).post('/auth/login').send({ username: f.admin.username, password });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.token as string;
  };
  const customer = (node: Node, token: string) => request(node.t.app).get('/v1.0/customer').set('Authorization', `Bearer ${token}`);
  const expect401 = (res: request.Response) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.error.reason).to.equal('INVALID_CREDENTIALS');
  };

  it('console sign-out: the same token gets 401 on REST and on the WebSocket at once on this node, within the cache window on another', async () => {
    const token = await login();
    expect((await customer(a, token)).status).to.equal(200); // cached on node a for a minute
    expect((await customer(b, token)).status).to.equal(200); // cached on node b for a second
    expect(await upgradeStatus(a.wsUrl(`token=${token}`))).to.deep.equal({ status: 101 });
    const open = await openSocket(a.wsUrl(`token=${token}`));

    const out = await request(a.t.app).post('/console/sign-out').set('Cookie', `token=${token}`);
    expect(out.status).to.equal(204);
    expect(String(out.headers['set-cookie'])).to.match(/^token=;/);

    expect401(await customer(a, token));
    expect401(await request(a.t.app).get('/v1.0/customer').set('Cookie', `token=${token}`));
    expect(await upgradeStatus(a.wsUrl(`token=${token}`))).to.deep.equal({ status: 401, reason: 'INVALID_CREDENTIALS' });
    expect((await within(open.closed, 5000, 'open socket closed')).code).to.equal(1008);

    await new Promise((r) => setTimeout(r, 1100)); // node b's cache window
    expect401(await customer(b, token));
    expect(await upgradeStatus(b.wsUrl(`token=${token}`))).to.deep.equal({ status: 401, reason: 'INVALID_CREDENTIALS' });
  });

  it('POST /auth/logout ends only the session it is called with; bad calls get the envelope', async () => {
    const first = await login();
    const second = await login();
    const res = await request(a.t.app).post('/auth/logout').set('Authorization', `Bearer ${first}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(204);
    expect401(await customer(a, first));
    expect((await customer(a, second)).status).to.equal(200); // another browser stays signed in
    // twice: that session is already gone
    expect401(await request(a.t.app).post('/auth/logout').set('Authorization', `Bearer ${first}`));
    // nothing, garbage, an accesskey (no session to end)
    const none = await request(a.t.app).post('/auth/logout');
    expect([none.status, none.body.error.reason]).to.deep.equal([401, 'AUTHENTICATION_REQUIRED']);
    expect401(await request(a.t.app).post('/auth/logout').set('Authorization', 'Bearer not.a.jwt'));
    const key = await request(a.t.app).post('/auth/logout').query({ accesskey: f.accesskey });
    expect([key.status, key.body.error.reason]).to.deep.equal([403, 'DIRECT_ACCESS_NOT_SUPPORTED']);
    expect((await customer(a, second)).status).to.equal(200);
  });

  it('console sign-out without a live session still clears the cookie (204)', async () => {
    const none = await request(a.t.app).post('/console/sign-out');
    expect(none.status).to.equal(204);
    const junk = await request(a.t.app).post('/console/sign-out').set('Cookie', 'token=junk');
    expect(junk.status).to.equal(204);
    expect(String(junk.headers['set-cookie'])).to.match(/^token=;/);
  });

  it('a password change ends every older session, the one that made it included; the new password logs in', async () => {
    const older = await login();
    const current = await login();
    expect((await customer(b, older)).status).to.equal(200);
    const res = await request(a.t.app).put(`/v1.0/agents/${f.admin.id}/password`).set('Authorization', `Bearer ${current}`).send({ password: 'a-new-password-1' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect401(await customer(a, older));
    expect401(await customer(a, current));
    expect401(await customer(a, f.token)); // a token signed before sessions existed (generation 0)
    await new Promise((r) => setTimeout(r, 1100));
    expect401(await customer(b, older));
    const fresh = await login(a, 'a-new-password-1');
    expect((await customer(a, fresh)).status).to.equal(200);
    expect((await customer(b, fresh)).status).to.equal(200);
  });

  it('a bad password change (too short) ends nothing', async () => {
    const token = await login();
    const res = await request(a.t.app).put(`/v1.0/agents/${f.admin.id}/password`).set('Authorization', `Bearer ${token}`).send({ password: 'short' });
    expect(res.status).to.equal(400);
    expect((await customer(a, token)).status).to.equal(200);
  });

  it('the own-password route of the agent API ends older sessions too', async () => {
    const token = await login();
    const res = await request(a.t.app).put('/v1.0/service_agents/me/password').set('Authorization', `Bearer ${token}`).send({ password: 'another-password-2' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect401(await customer(a, token));
  });

  it('a freeze ends every session (401); a new login gets 403 ACCOUNT_FROZEN and can recover', async () => {
    const token = await login();
    const open = await openSocket(a.wsUrl(`token=${token}`));
    const res = await request(a.t.app).post('/auth/unregister').set('Authorization', `Bearer ${token}`).send({ password: f.password });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.status).to.equal('frozen');
    expect401(await customer(a, token));
    expect(await upgradeStatus(a.wsUrl(`token=${token}`))).to.deep.equal({ status: 401, reason: 'INVALID_CREDENTIALS' });
    expect((await within(open.closed, 5000, 'open socket closed')).code).to.equal(1008);
    // the spec: frozen accounts log in; the versioned API answers ACCOUNT_FROZEN; DELETE /auth/unregister recovers
    const again = await login();
    const gated = await customer(a, again);
    expect([gated.status, gated.body.error.reason]).to.deep.equal([403, 'ACCOUNT_FROZEN']);
    expect((await request(a.t.app).delete('/auth/unregister').set('Authorization', `Bearer ${again}`)).status).to.equal(200);
    expect((await customer(a, again)).status).to.equal(200);
    expect401(await customer(a, token));
  });

  it('a freeze by the operator ends the sessions too', async () => {
    const token = await login();
    const op = await createFixture(a.t.ctx, { permission: Permission.ProjectSuperAdmin });
    const res = await request(a.t.app).post(`/v1.0/customers/${f.customer.id}/freeze`).set('Authorization', `Bearer ${op.token}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect401(await customer(a, token));
  });

  it("signing out a super admin's login ends the delegate tokens that session asked for", async () => {
    const op = await createFixture(a.t.ctx, { permission: Permission.ProjectSuperAdmin });
    const opLogin = async (): Promise<string> => {
      const res = await request(a.t.app).post('/auth/login').send({ username: op.admin.username, password: op.password });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.token as string;
    };
    const delegate = async (login: string): Promise<string> => {
      const res = await request(a.t.app).post('/auth/delegate').set('Authorization', `Bearer ${login}`).send({ customer_id: f.customer.id, reason: 'support ticket 32' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.token as string;
    };
    const [signedOut, other] = [await opLogin(), await opLogin()];
    const [dt, kept] = [await delegate(signedOut), await delegate(other)];
    expect((await customer(a, dt)).status).to.equal(200);
    expect((await customer(b, dt)).status).to.equal(200);
    const open = await openSocket(a.wsUrl(`token=${dt}`));
    expect((await request(a.t.app).post('/auth/logout').set('Authorization', `Bearer ${signedOut}`)).status).to.equal(204);
    expect401(await customer(a, dt));
    expect(await upgradeStatus(a.wsUrl(`token=${dt}`))).to.deep.equal({ status: 401, reason: 'INVALID_CREDENTIALS' });
    expect((await within(open.closed, 5000, 'open delegate socket closed')).code).to.equal(1008);
    await new Promise((r) => setTimeout(r, 1100)); // node b's cache window
    expect401(await customer(b, dt));
    // the super admin's other session and the delegate token it asked for stay
    expect((await customer(a, other)).status).to.equal(200);
    expect((await customer(a, kept)).status).to.equal(200);
  });

  it('a password reset by mail link ends every session', async () => {
    const token = await login();
    const link = await issueResetToken(a.t.ctx.db, f.admin);
    const res = await request(a.t.app).post('/auth/password-reset').send({ token: link, password: 'reset-password-3' });
    expect(res.status).to.equal(200);
    expect401(await customer(a, token));
  });
});
