// Rate limits exact (issue 13, item 5), against real Redis with the clock frozen (core/clock drives
// the GCRA step): exactly `burst` requests pass — also when they arrive all at once and spread over
// two control-api instances (the per-customer figure is a global ceiling) — request burst+1 gets
// 429 RATE_LIMIT_EXCEEDED in the envelope with Retry-After, and waiting Retry-After seconds lets one
// more through. Buckets: agent+accesskey share one per customer, direct and delegate tokens have their
// own; other customers are unaffected. RATE_LIMIT_SCALE multiplies rate and burst (burst rounded).
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, TEST_JWT_SECRET, type TestApp } from '../../testkit/api';
import { clock } from '../../core/clock';
import { TIERS } from '../../core/ratelimit';
import { signToken } from '../../core/credentials';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';
import { envelopeProblem } from './api/envelope';

type Res = request.Response;

function count(rs: Res[]): { ok: number; limited: number; other: number[] } {
  const ok = rs.filter((r) => r.status !== 429).length;
  const limited = rs.filter((r) => r.status === 429);
  for (const r of limited) {
    expect(envelopeProblem(r)).to.equal(undefined);
    expect(r.body.error).to.include({ status: 'RESOURCE_EXHAUSTED', reason: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(r.headers['retry-after'])).to.be.at.least(1);
  }
  return { ok, limited: limited.length, other: rs.filter((r) => r.status !== 429 && r.status >= 500).map((r) => r.status) };
}

/** A direct token of `customerId` for a new webchat widget (its own rate-limit bucket), signed as `app` expects. */
async function webchatDirectToken(app: TestApp, customerId: string): Promise<string> {
  const claims = {
    typ: 'direct',
    customer_id: customerId,
    resource_type: 'webchat_widget',
    resource_id: newId(),
    allowed_resource_id: newId(),
    scope_version: app.ctx.config.directScopeVersion,
  } as const;
  return (await signToken(TEST_JWT_SECRET, claims, 600)).token;
}

describe('reliability: rate limits are exact', function () {
  this.timeout(90_000);
  let t: TestApp;
  let t2: TestApp;
  beforeEach(async () => {
    clock.setNow(Date.now());
    t = await buildTestApp(); // a fresh key prefix: empty buckets
    // a second control-api on the same Redis prefix: the per-customer buckets are shared
    t2 = await buildTestApp({ env: { REDIS_KEY_PREFIX: t.ctx.config.redisKeyPrefix } });
  });
  afterEach(async () => {
    clock.reset();
    await t.close();
    await t2.close();
  });

  const get = (app: TestApp, q: Record<string, string> | null, bearer?: string) => {
    const r = request(app.app).get('/v1.0/customer');
    if (q) r.query(q);
    if (bearer) r.set('Authorization', `Bearer ${bearer}`);
    return r;
  };

  it('per customer: of burst+7 concurrent requests over two instances and both credential kinds exactly burst pass; others unaffected', async () => {
    const f = await createFixture(t.ctx);
    const g = await createFixture(t.ctx);
    const n = TIERS.customer.burst;
    const sends = Array.from({ length: n + 7 }, (_, i) => (i % 2 ? get(i % 4 === 1 ? t : t2, { accesskey: f.accesskey }) : get(i % 4 === 0 ? t : t2, null, f.token)));
    const c = count(await Promise.all(sends));
    expect(c).to.deep.equal({ ok: n, limited: 7, other: [] });
    const over = await get(t2, { accesskey: f.accesskey });
    expect(over.status).to.equal(429);
    expect(over.body.error.details[0]).to.deep.equal({ limited_by: 'customer' });
    // another customer has its own bucket, full
    expect(count(await Promise.all(Array.from({ length: n }, () => get(t, { accesskey: g.accesskey }))))).to.deep.equal({ ok: n, limited: 0, other: [] });
    // Retry-After is honest: after it, exactly one more request fits (rate 16.7/s refills one in 60 ms)
    const wait = Number(over.headers['retry-after']);
    expect(wait).to.equal(1);
    clock.advance(wait * 1000);
    const after = count(await Promise.all(Array.from({ length: 30 }, () => get(t, { accesskey: f.accesskey }))));
    expect(after.ok).to.equal(Math.floor((wait * 1000) / (1000 / TIERS.customer.rate) + 0.5));
  });

  it('direct and delegate tokens have their own buckets (100, 16), exact under concurrency', async () => {
    const f = await createFixture(t.ctx);
    const sa = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const direct = await webchatDirectToken(t, f.customer.id);
    const delegate = (await signToken(TEST_JWT_SECRET, { typ: 'delegate', sub: sa.admin.id, customer_id: f.customer.id, delegator_customer_id: sa.customer.id }, 600)).token;
    // the direct token's route answers 404 (no such session) but every request counts
    const d = await Promise.all(
      Array.from({ length: TIERS.customer_direct.burst + 5 }, (_, i) =>
        request((i % 2 ? t : t2).app)
          .get(`/v1.0/webchat_sessions/${newId()}`)
          .set('Authorization', `Bearer ${direct}`),
      ),
    );
    expect(count(d)).to.deep.equal({ ok: TIERS.customer_direct.burst, limited: 5, other: [] });
    const del = await Promise.all(Array.from({ length: TIERS.customer_delegate.burst + 3 }, () => get(t, null, delegate)));
    expect(count(del)).to.deep.equal({ ok: TIERS.customer_delegate.burst, limited: 3, other: [] });
    // neither touched the customer's own agent/accesskey bucket
    expect(count(await Promise.all(Array.from({ length: TIERS.customer.burst }, () => get(t2, { accesskey: f.accesskey }))))).to.deep.equal({ ok: TIERS.customer.burst, limited: 0, other: [] });
  });

  it('per IP: unauthenticated /auth/* stops at 20, the versioned API at 400, with limited_by ip', async () => {
    // one username each: the per-username login throttle (control-api/auth/login-throttle.ts) stays out of this
    const auth = await Promise.all(
      Array.from({ length: TIERS.auth_public.burst + 4 }, (_, i) =>
        request(t.app)
          .post('/auth/login')
          .send({ username: `nobody${i}`, password: 'x' }),
      ),
    );
    expect(auth.filter((r) => r.status === 429)).to.have.length(4);
    const limited = auth.find((r) => r.status === 429)!;
    expect(limited.body.error.details[0]).to.deep.equal({ limited_by: 'ip' });
    expect(Number(limited.headers['retry-after'])).to.be.at.least(1);
    const v1 = await Promise.all(Array.from({ length: TIERS.v1_ip.burst + 2 }, () => request(t.app).get('/v1.0/customer')));
    expect(v1.filter((r) => r.status === 429)).to.have.length(2);
    expect(v1.filter((r) => r.status === 401)).to.have.length(TIERS.v1_ip.burst);
  });

  it('RATE_LIMIT_SCALE=0.1: the customer bucket holds round(33 × 0.1) = 3, the direct one 10', async () => {
    const s = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0.1' } });
    try {
      const f = await createFixture(s.ctx);
      expect(count(await Promise.all(Array.from({ length: 8 }, () => get(s, { accesskey: f.accesskey }))))).to.deep.equal({ ok: 3, limited: 5, other: [] });
      const direct = await webchatDirectToken(s, f.customer.id);
      const d = await Promise.all(Array.from({ length: 14 }, () => request(s.app).get(`/v1.0/webchat_sessions/${newId()}`).set('Authorization', `Bearer ${direct}`)));
      expect(count(d)).to.deep.equal({ ok: 10, limited: 4, other: [] });
    } finally {
      await s.close();
    }
  });
});
