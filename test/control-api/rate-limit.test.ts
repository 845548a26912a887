import { expect } from 'chai';
import request from 'supertest';
import { Redis } from 'ioredis';
import { buildTestApp, createFixture, TEST_JWT_SECRET, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { clock } from '../../core/clock';
import { createLimiter, TIERS } from '../../core/ratelimit';
import { signToken } from '../../core/credentials';
import { Permission } from '../../core/permissions';

/** Sends n requests one after the other; returns the statuses. */
async function burst(n: number, send: () => request.Test): Promise<request.Response[]> {
  const out: request.Response[] = [];
  for (let i = 0; i < n; i++) out.push(await send());
  return out;
}

function expect429(res: request.Response, limitedBy: 'ip' | 'customer') {
  expect(res.status, JSON.stringify(res.body)).to.equal(429);
  expect(res.body.error.status).to.equal('RESOURCE_EXHAUSTED');
  expect(res.body.error.reason).to.equal('RATE_LIMIT_EXCEEDED');
  expect(res.body.error.details[0].limited_by).to.equal(limitedBy);
  expect(Number(res.headers['retry-after'])).to.be.a('number').and.at.least(1);
}

describe('control-api: rate limits (real Redis, frozen clock)', function () {
  this.timeout(60_000);
  let t: TestApp;
  beforeEach(async () => {
    await truncateAll();
    clock.setNow(Date.now());
    t = await buildTestApp(); // a fresh key prefix: empty buckets
  });
  afterEach(async () => {
    clock.reset();
    await t.close();
  });

  it('per customer (agent and accesskey share one bucket): the 34th request is refused, Retry-After given', async () => {
    const f = await createFixture(t.ctx);
    const tierBurst = TIERS.customer.burst;
    const half = Math.floor(tierBurst / 2);
    const a = await burst(half, () => request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey }));
    const b = await burst(tierBurst - half, () => request(t.app).get('/v1.0/customer').set('Authorization', `Bearer ${f.token}`));
    expect([...a, ...b].map((r) => r.status)).to.deep.equal(Array(tierBurst).fill(200));
    const over = await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
    expect429(over, 'customer');
    // Another customer is not affected.
    const g = await createFixture(t.ctx);
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: g.accesskey })).status).to.equal(200);
    // One token comes back after one emission interval (1/16.7 s; the bucket rounds at half an interval).
    const interval = 1000 / TIERS.customer.rate;
    clock.advance(Math.floor(interval / 2) - 5);
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).status).to.equal(429);
    clock.advance(Math.ceil(interval / 2) + 5);
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).status).to.equal(200);
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).status).to.equal(429);
  });

  it('delegate tokens have their own smaller bucket (16)', async () => {
    const target = await createFixture(t.ctx);
    const sa = await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'delegate', sub: sa.admin.id, customer_id: target.customer.id, delegator_customer_id: sa.customer.id }, 600);
    const ok = await burst(TIERS.customer_delegate.burst, () => request(t.app).get('/v1.0/customer').query({ token }));
    expect(ok.every((r) => r.status === 200)).to.equal(true);
    expect429(await request(t.app).get('/v1.0/customer').query({ token }), 'customer');
    // The customer's own agent bucket is separate.
    expect((await request(t.app).get('/v1.0/customer').query({ accesskey: target.accesskey })).status).to.equal(200);
  });

  it('per IP on the versioned API: request 401 past the burst of 400 is refused with limited_by ip', async () => {
    const n = TIERS.v1_ip.burst;
    const res = await burst(n, () => request(t.app).get('/v1.0/customer'));
    expect(res.every((r) => r.status === 401)).to.equal(true);
    expect429(await request(t.app).get('/v1.0/customer'), 'ip');
  });

  it('RATE_LIMIT_SCALE multiplies the limits and 0 disables them', async () => {
    const scaled = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0.5' } });
    const off = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
    try {
      const f = await createFixture(t.ctx);
      const half = Math.round(TIERS.customer.burst * 0.5);
      const r = await burst(half, () => request(scaled.app).get('/v1.0/customer').query({ accesskey: f.accesskey }));
      expect(r.every((x) => x.status === 200)).to.equal(true);
      expect429(await request(scaled.app).get('/v1.0/customer').query({ accesskey: f.accesskey }), 'customer');
      const o = await burst(TIERS.customer.burst + 5, () => request(off.app).get('/v1.0/customer').query({ accesskey: f.accesskey }));
      expect(o.every((x) => x.status === 200)).to.equal(true);
    } finally {
      await scaled.close();
      await off.close();
    }
  });

  it('the limiter fails open when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1/0', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => undefined);
    try {
      const l = createLimiter(dead, 'customer', { scale: 1, prefix: 'dead:', timeoutMs: 200 });
      for (let i = 0; i < TIERS.customer.burst + 3; i++) expect((await l.consume('x')).allowed).to.equal(true);
    } finally {
      dead.disconnect();
    }
  });
});
