import { expect } from 'chai';
import request from 'supertest';
import { SignJWT } from 'jose';
import { buildTestApp, createFixture, TEST_JWT_SECRET, type TestApp, type Fixture } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { clock } from '../../core/clock';
import { signToken, hashAccesskeyToken } from '../../core/credentials';
import { Permission } from '../../core/permissions';

describe('control-api: credentials', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await buildTestApp();
  });
  beforeEach(async () => {
    await truncateAll();
    f = await createFixture(t.ctx);
  });
  afterEach(() => clock.reset());
  after(async () => t.close());

  const get = (q: Record<string, string> = {}) => request(t.app).get('/v1.0/customer').query(q);
  const expect401 = (res: request.Response, reason: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.error.status).to.equal('UNAUTHENTICATED');
    expect(res.body.error.reason).to.equal(reason);
  };

  it('accepts a JWT as Bearer header, token query parameter and token cookie', async () => {
    for (const res of [await get().set('Authorization', `Bearer ${f.token}`), await get({ token: f.token }), await get().set('Cookie', `other=1; token=${f.token}`)]) {
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.id).to.equal(f.customer.id);
    }
  });

  it('accepts an accesskey only as the accesskey query parameter', async () => {
    expect((await get({ accesskey: f.accesskey })).status).to.equal(200);
    expect401(await get().set('Authorization', `Bearer ${f.accesskey}`), 'INVALID_CREDENTIALS');
    expect401(await get({ token: f.accesskey }), 'INVALID_CREDENTIALS');
    expect401(await get().set('Cookie', `accesskey=${f.accesskey}`), 'AUTHENTICATION_REQUIRED');
  });

  it('the wrong parameter name gives 401', async () => {
    expect401(await get({ access_key: f.accesskey }), 'AUTHENTICATION_REQUIRED');
    expect401(await get({ api_key: f.accesskey }), 'AUTHENTICATION_REQUIRED');
    expect401(await get({ accesskey: f.token }), 'INVALID_CREDENTIALS');
    expect401(await get({ jwt: f.token }), 'AUTHENTICATION_REQUIRED');
    expect401(await get().set('Authorization', `Token ${f.token}`), 'INVALID_CREDENTIALS');
  });

  it('no credentials → 401 AUTHENTICATION_REQUIRED', async () => {
    expect401(await get(), 'AUTHENTICATION_REQUIRED');
    expect401(await get({ token: '' }), 'AUTHENTICATION_REQUIRED');
  });

  it('an expired JWT → 401 INVALID_CREDENTIALS (7 days)', async () => {
    clock.setNow(Date.now());
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: f.admin.id, customer_id: f.customer.id }, 7 * 24 * 3600);
    clock.advance(7 * 24 * 3600 * 1000 - 5000);
    expect((await get({ token })).status).to.equal(200);
    clock.advance(10_000);
    expect401(await get({ token }), 'INVALID_CREDENTIALS');
  });

  it('tampered, foreign-signed, alg=none and malformed tokens → 401 INVALID_CREDENTIALS', async () => {
    const [h, p, s] = f.token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const other = await createFixture(t.ctx);
    const forged = Buffer.from(JSON.stringify({ ...claims, customer_id: other.customer.id })).toString('base64url');
    expect401(await get({ token: `${h}.${forged}.${s}` }), 'INVALID_CREDENTIALS');
    const flipped = s.slice(0, -2) + (s.endsWith('A') ? 'BB' : 'AA');
    expect401(await get({ token: `${h}.${p}.${flipped}` }), 'INVALID_CREDENTIALS');
    const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('another-secret-another-secret-another-secret'));
    expect401(await get({ token: foreign }), 'INVALID_CREDENTIALS');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    expect401(await get({ token: none }), 'INVALID_CREDENTIALS');
    expect401(await get({ token: 'not.a.jwt' }), 'INVALID_CREDENTIALS');
  });

  it('a token whose claims do not match the agent, or whose agent is deleted → 401', async () => {
    const other = await createFixture(t.ctx);
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: f.admin.id, customer_id: other.customer.id }, 3600);
    expect401(await get({ token }), 'INVALID_CREDENTIALS');
    await t.ctx.repos.agents.softDelete(f.admin.id);
    expect401(await get({ token: f.token }), 'INVALID_CREDENTIALS');
  });

  it('an expired or deleted accesskey → 401 INVALID_CREDENTIALS', async () => {
    clock.setNow(Date.now());
    const { row, token } = await t.ctx.repos.accesskeys.create({ customer_id: f.customer.id, expireSec: 60 });
    expect((await get({ accesskey: token })).status).to.equal(200);
    clock.advance(61_000);
    expect401(await get({ accesskey: token }), 'INVALID_CREDENTIALS');
    clock.reset();
    await t.ctx.repos.accesskeys.softDelete(f.accesskeyRow.id);
    expect401(await get({ accesskey: f.accesskey }), 'INVALID_CREDENTIALS');
    expect(row.token_hash).to.equal(hashAccesskeyToken(token));
  });

  it('direct tokens: current scope_version only, and refused on endpoints that do not opt in', async () => {
    const claims = {
      typ: 'direct' as const,
      customer_id: f.customer.id,
      resource_type: 'webchat_widget',
      resource_id: '1b0c6c53-8f0e-4f4e-a0a4-1d1c8e8b9a01',
      allowed_resource_id: '2b0c6c53-8f0e-4f4e-a0a4-1d1c8e8b9a02',
      scope_version: t.ctx.config.directScopeVersion,
    };
    const { token } = await signToken(TEST_JWT_SECRET, claims, 4 * 3600);
    const res = await get({ token });
    expect(res.status).to.equal(403);
    expect(res.body.error.reason).to.equal('PERMISSION_DENIED');
    const { token: old } = await signToken(TEST_JWT_SECRET, { ...claims, scope_version: claims.scope_version + 1 }, 4 * 3600);
    expect401(await get({ token: old }), 'INVALID_CREDENTIALS');
  });

  it('delegate tokens act on the target customer, only while the delegator is a ProjectSuperAdmin', async () => {
    const admin = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const claims = { typ: 'delegate' as const, sub: admin.admin.id, customer_id: f.customer.id, delegator_customer_id: admin.customer.id };
    const { token } = await signToken(TEST_JWT_SECRET, claims, 600);
    const res = await get({ token });
    expect(res.status).to.equal(200);
    expect(res.body.id).to.equal(f.customer.id);
    // A plain admin cannot delegate.
    const plain = { ...claims, sub: f.admin.id, delegator_customer_id: f.customer.id };
    expect401(await get({ token: (await signToken(TEST_JWT_SECRET, plain, 600)).token }), 'INVALID_CREDENTIALS');
  });
});
