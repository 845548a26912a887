import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import knexFactory from 'knex';
import { customersRepo } from '../../core/repos';

describe('control-api: account status gate', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  beforeEach(() => truncateAll());
  after(async () => t.close());

  it('active and initial accounts pass', async () => {
    for (const status of ['active', 'initial'] as const) {
      const f = await createFixture(t.ctx, { status });
      expect((await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey })).status).to.equal(200);
    }
  });

  it('frozen → 403 ACCOUNT_FROZEN with recovery_endpoint and deletion_effective_at', async () => {
    const f = await createFixture(t.ctx);
    const scheduled = new Date('2026-03-01T10:00:00.000Z');
    await t.ctx.repos.customers.update(f.customer.id, { status: 'frozen', tm_deletion_scheduled: scheduled });
    const res = await request(t.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
    expect(res.status).to.equal(403);
    expect(res.body.error.status).to.equal('PERMISSION_DENIED');
    expect(res.body.error.reason).to.equal('ACCOUNT_FROZEN');
    expect(res.body.error.details[0]).to.deep.equal({
      deletion_scheduled_at: '2026-03-01T10:00:00.000000Z',
      deletion_effective_at: '2026-03-31T10:00:00.000000Z',
      recovery_endpoint: 'DELETE /auth/unregister',
    });
    // Every versioned route is gated, not just /customer.
    const keys = await request(t.app).get('/v1.0/accesskeys').set('Authorization', `Bearer ${f.token}`);
    expect(keys.body.error.reason).to.equal('ACCOUNT_FROZEN');
  });

  it('expired → 403 ACCOUNT_EXPIRED pointing at the resend operation; deleted → 403 ACCOUNT_DELETED', async () => {
    const f = await createFixture(t.ctx, { status: 'expired' });
    const res = await request(t.app).get('/v1.0/customer').query({ token: f.token });
    expect(res.status).to.equal(403);
    expect(res.body.error.reason).to.equal('ACCOUNT_EXPIRED');
    expect(res.body.error.details[0].recovery_endpoint).to.equal('POST /auth/email-verify-resend');
    const g = await createFixture(t.ctx, { status: 'deleted' });
    const del = await request(t.app).get('/v1.0/customer').query({ accesskey: g.accesskey });
    expect(del.status).to.equal(403);
    expect(del.body.error.reason).to.equal('ACCOUNT_DELETED');
  });

  it('fails open when the status lookup itself fails (broken pool)', async () => {
    // Nothing listens on port 1: every lookup fails at once (connection refused).
    const quiet = { warn() {}, error() {}, debug() {}, deprecate() {} };
    const broken = knexFactory({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:1/nowhere', pool: { min: 0, max: 1 }, log: quiet });
    const g = await buildTestApp({ context: { statusLookup: (id) => customersRepo(broken).statusOf(id) } });
    try {
      const f = await createFixture(g.ctx);
      await g.ctx.repos.customers.update(f.customer.id, { status: 'frozen' });
      const res = await request(g.app).get('/v1.0/customer').query({ accesskey: f.accesskey });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.status).to.equal('frozen');
    } finally {
      await g.close();
      await broken.destroy();
    }
  });
});
