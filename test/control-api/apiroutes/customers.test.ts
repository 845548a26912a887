// /customers (ProjectSuperAdmin): permissions, bad input, and a freeze/recover/delete with the effects
// of the account's own /auth/unregister: REST refused at once, open WebSockets closed (1008).
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { WebSocket } from 'ws';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../../testkit/api';
import { truncateAll } from '../../../testkit/db';
import { freePort } from '../../../testkit/ports';
import { attachWebSocket, type WebSocketService } from '../../../control-api/ws';
import { newId } from '../../../core/ids';
import { Permission } from '../../../core/permissions';

describe('/customers (ProjectSuperAdmin)', function () {
  this.timeout(30000);
  let t: TestApp;
  let server: http.Server;
  let ws: WebSocketService;
  let port: number;
  let su: Fixture;
  let c: Fixture;
  const as = (f: Fixture) => ({
    get: (p: string) => request(t.app).get(`/v1.0${p}`).set('Authorization', `Bearer ${f.token}`),
    post: (p: string) => request(t.app).post(`/v1.0${p}`).set('Authorization', `Bearer ${f.token}`),
    put: (p: string) => request(t.app).put(`/v1.0${p}`).set('Authorization', `Bearer ${f.token}`),
    delete: (p: string) => request(t.app).delete(`/v1.0${p}`).set('Authorization', `Bearer ${f.token}`),
  });

  before(async () => {
    // The backstop pass is off: a socket closes only through the announced recheck.
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    server = http.createServer(t.app);
    port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    ws = await attachWebSocket(server, t.ctx, { stream: `test-customers-${newId()}`, recheckMs: 600_000 });
  });
  after(async () => {
    await ws.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await t.close();
  });
  beforeEach(async () => {
    await truncateAll();
    su = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin });
    c = await createFixture(t.ctx);
  });

  it('refuses a customer admin on every operation with 403 PERMISSION_DENIED', async () => {
    const id = c.customer.id;
    const replies = [
      await as(c).get('/customers'),
      await as(c).post('/customers').send({ email: 'x@example.test' }),
      await as(c).get(`/customers/${id}`),
      await as(c).put(`/customers/${id}`).send({ name: 'x' }),
      await as(c).delete(`/customers/${id}`),
      await as(c).post(`/customers/${id}/freeze`),
      await as(c).post(`/customers/${id}/recover`),
      await as(c).put(`/customers/${id}/metadata`).send({ rtp_debug: true }),
      await as(c).put(`/customers/${id}/billing_account_id`).send({ billing_account_id: newId() }),
    ];
    replies.forEach((r, i) => expect([r.status, r.body.error?.reason], `request ${i}`).to.deep.equal([403, 'PERMISSION_DENIED']));
    expect((await as(c).get('/customer')).body.status).to.equal('active');
  });

  it('creates an active customer with an admin agent, outbound config and billing account; refuses bad input', async () => {
    const ok = await as(su).post('/customers').send({ name: 'n', email: 'New@Example.test', webhook_method: 'POST', webhook_uri: '' });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ email: 'new@example.test', status: 'active', name: 'n' });
    const id = ok.body.id as string;
    expect(await t.ctx.db('agents').where({ customer_id: id, username: 'new@example.test' }).first()).to.exist;
    expect(await t.ctx.repos.outboundConfigs.getForCustomer(id)).to.exist;
    expect((await t.ctx.db('billing_accounts').where({ customer_id: id }).first())!.id).to.equal(ok.body.billing_account_id);

    const bad = async (body: object, field: string) => {
      const r = await as(su).post('/customers').send(body);
      expect([r.status, r.body.error.reason], JSON.stringify(body)).to.deep.equal([400, 'INVALID_ARGUMENT']);
      expect(r.body.error.details[0].field).to.equal(field);
    };
    await bad({ name: 'n' }, 'email');
    await bad({ email: 'not-an-email' }, 'email');
    await bad({ email: 'a@example.test', webhook_method: 'PATCH' }, 'webhook_method');
    await bad({ email: 'a@example.test', status: 'active' }, 'status');
    const dup = await as(su).post('/customers').send({ email: 'NEW@example.test' });
    expect([dup.status, dup.body.error.reason]).to.deep.equal([409, 'ALREADY_EXISTS']);
  });

  it('answers INVALID_ID, not found and wrong state clearly', async () => {
    expect((await as(su).get('/customers/nope')).body.error.reason).to.equal('INVALID_ID');
    for (const r of [await as(su).get(`/customers/${newId()}`), await as(su).post(`/customers/${newId()}/freeze`), await as(su).delete(`/customers/${newId()}`)]) {
      expect([r.status, r.body.error.reason]).to.deep.equal([404, 'RESOURCE_NOT_FOUND']);
    }
    const r = await as(su).post(`/customers/${c.customer.id}/recover`);
    expect([r.status, r.body.error.reason]).to.deep.equal([409, 'STATE_INVALID']);
    const own = await as(su).post(`/customers/${su.customer.id}/freeze`);
    expect([own.status, own.body.error.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
    const meta = await as(su).put(`/customers/${c.customer.id}/metadata`).send({ rtp_debug: 'yes' });
    expect([meta.status, meta.body.error.details[0].field]).to.deep.equal([400, 'rtp_debug']);
  });

  it('a freeze refuses the account at once and closes its open WebSocket; recover lets it back in', async () => {
    // Warm the status gate's cache with "active": the freeze must drop it.
    expect((await as(c).get('/customer')).status).to.equal(200);
    const socket = new WebSocket(`ws://127.0.0.1:${port}/v1.0/ws?token=${c.token}`);
    const closed = new Promise<[number, string]>((r) => socket.on('close', (code, why) => r([code, why.toString()])));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });

    const f = await as(su).post(`/customers/${c.customer.id}/freeze`);
    expect(f.status).to.equal(200);
    expect(f.body.status).to.equal('frozen');
    expect(f.body.tm_deletion_scheduled).to.be.a('string').and.not.match(/^9999/);
    // the freeze ended the account's sessions (docs/security.md "Sessions"); its accesskey meets the gate
    const ended = await as(c).get('/customer');
    expect([ended.status, ended.body.error.reason]).to.deep.equal([401, 'INVALID_CREDENTIALS']);
    const refused = await request(t.app).get('/v1.0/customer').query({ accesskey: c.accesskey });
    expect([refused.status, refused.body.error.reason]).to.deep.equal([403, 'ACCOUNT_FROZEN']);
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([closed, new Promise<never>((_r, rej) => (timer = setTimeout(() => rej(new Error('socket still open')), 5000)))]);
    clearTimeout(timer);
    expect(res).to.deep.equal([1008, 'ACCOUNT_FROZEN']);
    expect((await as(su).post(`/customers/${c.customer.id}/freeze`)).body.status, 'idempotent').to.equal('frozen');

    const r = await as(su).post(`/customers/${c.customer.id}/recover`);
    expect([r.status, r.body.status]).to.deep.equal([200, 'active']);
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: c.accesskey })).status).to.equal(200);
    expect((await as(c).get('/customer')).status, 'an ended session stays ended').to.equal(401);
    const login = await request(t.app).post('/auth/login').send({ username: c.admin.username, password: c.password });
    expect(login.status).to.equal(200);
    c.token = login.body.token as string;
    expect((await as(c).get('/customer')).status).to.equal(200);
  });

  it("a delete removes the account's records (its agents with them, so its tokens are refused)", async () => {
    expect((await as(c).get('/customer')).status).to.equal(200);
    const d = await as(su).delete(`/customers/${c.customer.id}`);
    expect([d.status, d.body.status]).to.deep.equal([200, 'deleted']);
    expect(await t.ctx.db('agents').where({ customer_id: c.customer.id }).first()).to.equal(undefined);
    const r = await as(c).get('/customer');
    expect([r.status, r.body.error.reason]).to.deep.equal([401, 'INVALID_CREDENTIALS']);
    expect((await t.ctx.repos.customers.get(c.customer.id, { includeDeleted: true }))?.status).to.equal('deleted');
    const list = await as(su).get('/customers');
    expect(list.body.result.map((x: { id: string }) => x.id)).not.to.include(c.customer.id);
  });
});
