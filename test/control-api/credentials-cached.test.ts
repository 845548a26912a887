/**
 * Credentials answered from the in-process caches (the production setting: a verified credential is
 * trusted for cacheTtlMs without a database read): the same AuthContext and the same 401s as the
 * uncached path, expiry still checked on every request, and invalidation taking effect at once.
 */
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, TEST_JWT_SECRET, type TestApp, type Fixture } from '../../testkit/api';
import { clock } from '../../core/clock';
import { signToken, hashAccesskeyToken } from '../../core/credentials';
import { Permission } from '../../core/permissions';

describe('control-api: credentials from the cache', function () {
  this.timeout(20_000);
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' }, app: { cacheTtlMs: 60_000 } });
  });
  beforeEach(async () => {
    f = await createFixture(t.ctx);
  });
  afterEach(() => clock.reset());
  after(async () => t.close());

  const get = (q: Record<string, string> = {}, headers: Record<string, string> = {}) => request(t.app).get('/v1.0/customer').query(q).set(headers);
  const me = (q: Record<string, string>) => request(t.app).get('/v1.0/me').query(q);
  const expect401 = (res: request.Response, reason: string, message?: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.error.reason).to.equal(reason);
    if (message) expect(res.body.error.message).to.match(message);
  };

  it('an accesskey: read once, then answered from the cache until invalidated', async () => {
    expect((await get({ accesskey: f.accesskey })).body.id).to.equal(f.customer.id);
    await t.ctx.db('accesskeys').where({ id: f.accesskeyRow.id }).del(); // behind the cache's back
    const again = await get({ accesskey: f.accesskey });
    expect(again.status).to.equal(200);
    expect(again.body.id).to.equal(f.customer.id);
    t.platform.credentials.invalidateAccesskey(hashAccesskeyToken(f.accesskey));
    expect401(await get({ accesskey: f.accesskey }), 'INVALID_CREDENTIALS', /accesskey invalid/);
    expect401(await get({ accesskey: f.accesskey }), 'INVALID_CREDENTIALS', /accesskey invalid/); // the miss is cached too
  });

  it("a cached accesskey's expiry is checked on every request", async () => {
    clock.setNow(Date.now());
    const { token } = await t.ctx.repos.accesskeys.create({ customer_id: f.customer.id, expireSec: 60 });
    expect((await get({ accesskey: token })).status).to.equal(200);
    expect((await get({ accesskey: token })).status).to.equal(200);
    clock.advance(61_000);
    expect401(await get({ accesskey: token }), 'INVALID_CREDENTIALS', /accesskey expired/);
  });

  it('an over-long accesskey is refused before any lookup, cached or not', async () => {
    expect401(await get({ accesskey: 'k'.repeat(257) }), 'INVALID_CREDENTIALS');
  });

  it('a login token: the agent read once, then cached until invalidated; permission and claims still checked', async () => {
    const first = await me({ token: f.token });
    expect(first.status).to.equal(200);
    expect((await me({ token: f.token })).body.id).to.equal(f.admin.id);
    expect((await get({}, { authorization: `Bearer ${f.token}` })).status).to.equal(200);
    // A token for the same agent but another customer: the cached agent does not match its claims.
    const other = await createFixture(t.ctx);
    const { token: wrong } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: f.admin.id, customer_id: other.customer.id }, 3600);
    expect401(await get({ token: wrong }), 'INVALID_CREDENTIALS', /agent no longer exists/);
    expect401(await get({ token: wrong }), 'INVALID_CREDENTIALS', /agent no longer exists/);
    await t.ctx.repos.agents.softDelete(f.admin.id);
    expect((await get({ token: f.token })).status).to.equal(200); // still cached
    t.platform.credentials.invalidateAgent(f.admin.id);
    expect401(await get({ token: f.token }), 'INVALID_CREDENTIALS', /agent no longer exists/);
  });

  it('a cached token past its exp is verified again and refused', async () => {
    clock.setNow(Date.now());
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: f.admin.id, customer_id: f.customer.id }, 2);
    expect((await get({ token })).status).to.equal(200);
    expect((await get({ token })).status).to.equal(200);
    clock.advance(3_000);
    expect401(await get({ token }), 'INVALID_CREDENTIALS', /token expired/);
  });

  it('a delegate token acts on the target customer from the cache, only while the delegator is a ProjectSuperAdmin', async () => {
    const admin = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const claims = { typ: 'delegate' as const, sub: admin.admin.id, customer_id: f.customer.id, delegator_customer_id: admin.customer.id };
    const { token } = await signToken(TEST_JWT_SECRET, claims, 600);
    expect((await get({ token })).body.id).to.equal(f.customer.id);
    expect((await get({ token })).body.id).to.equal(f.customer.id);
    // A plain admin cannot delegate, on the cached path either.
    const plain = (await signToken(TEST_JWT_SECRET, { ...claims, sub: f.admin.id, delegator_customer_id: f.customer.id }, 600)).token;
    expect((await me({ token: f.token })).status).to.equal(200); // f.admin now cached
    expect401(await get({ token: plain }), 'INVALID_CREDENTIALS', /delegating agent no longer allowed/);
    expect401(await get({ token: plain }), 'INVALID_CREDENTIALS', /delegating agent no longer allowed/);
  });

  it('a malformed Authorization header and no credentials at all: 401 as before', async () => {
    expect401(await get({ accesskey: f.accesskey }, { authorization: 'Basic abc' }), 'INVALID_CREDENTIALS', /Bearer/);
    expect401(await get(), 'AUTHENTICATION_REQUIRED');
  });
});
