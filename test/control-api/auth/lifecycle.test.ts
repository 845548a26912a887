import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { runLifecyclePass } from '../../../control-api/jobs/account-lifecycle';
import { deleteCustomerAccount, accountEvents } from '../../../control-api/jobs/account-deletion';
import { startLifecycleScheduler } from '../../../control-api/jobs/scheduler';
import { startHarness, uniqueEmail, lastMail, expectBare, activeAccount, testUrls, type Harness } from './harness';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('account lifecycle (controllable clock)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  afterEach(() => clock.reset());

  const status = async (id: string) => (await h.db('customers').where({ id }).first())!.status as string;

  it('initial -> expired after 72 h without verification -> resend + verify -> active', async () => {
    const t0 = Date.now();
    clock.setNow(t0);
    const email = uniqueEmail('expire');
    const s = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
    const id = s.body.customer.id;

    clock.setNow(t0 + 71 * HOUR);
    expect((await runLifecyclePass(h.db, [id])).expired).to.not.include(id);
    expect(await status(id)).to.equal('initial');

    clock.setNow(t0 + 72 * HOUR + 1000);
    expect((await runLifecyclePass(h.db, [id])).expired).to.include(id);
    expect(await status(id)).to.equal('expired');
    // the versioned API's gate now refuses the signup key (checked through the shared gate on /auth/delegate)
    const gated = await request(h.app)
      .post(`/auth/delegate?accesskey=${encodeURIComponent(s.body.accesskey.token)}`)
      .send({ customer_id: id, reason: 'a valid reason here' });
    expect(gated.status).to.equal(403);
    expect(gated.body.error.reason).to.equal('ACCOUNT_EXPIRED');
    expect(gated.body.error.details[0].recovery_endpoint).to.equal('POST /auth/email-verify-resend');

    // the first link is long dead; a resend issues a new one and verification brings the account back
    expectBare(
      await request(h.app)
        .post('/auth/email-verify')
        .send({ token: (await lastMail(h.outbox, email, 'verification'))!.token }),
    );
    expect((await request(h.app).post('/auth/email-verify-resend').send({ email })).status).to.equal(200);
    const fresh = await lastMail(h.outbox, email, 'verification');
    const v = await request(h.app).post('/auth/email-verify').send({ token: fresh!.token });
    expect(v.status).to.equal(200);
    expect(v.body.customer).to.include({ status: 'active', email_verified: true });
    expect((await runLifecyclePass(h.db, [id])).expired).to.not.include(id);
    expect(await status(id)).to.equal('active');
  });

  it('an expired account without a live agent cannot be re-verified', async () => {
    const email = uniqueEmail('noagent');
    const s = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
    const id = s.body.customer.id;
    await h.db('customers').where({ id }).update({ status: 'expired' });
    const token = (await lastMail(h.outbox, email, 'verification'))!.token;
    await h.db('agents').where({ customer_id: id }).update({ tm_delete: new Date() });
    expectBare(await request(h.app).post('/auth/email-verify').send({ token }));
    expect(await status(id)).to.equal('expired');
  });

  it('active -> frozen -> active (DELETE) -> frozen -> deleted after the 30-day grace, cascading', async () => {
    const t0 = Date.now();
    clock.setNow(t0);
    const a = await activeAccount(h);
    const login = async () => ({ Authorization: `Bearer ${(await request(h.app).post('/auth/login').send({ username: a.email, password: a.password })).body.token}` });
    expect(
      (
        await request(h.app)
          .post('/auth/unregister')
          .set(await login())
          .send({ password: a.password })
      ).body.status,
    ).to.equal('frozen');
    clock.setNow(t0 + 10 * DAY); // the login token of day 0 is dead by now (7 days); log in again
    expect(
      (
        await request(h.app)
          .delete('/auth/unregister')
          .set(await login())
      ).body.status,
    ).to.equal('active');
    clock.setNow(t0 + 40 * DAY);
    expect((await runLifecyclePass(h.db, [a.customerId])).deleted).to.not.include(a.customerId); // recovered: nothing due
    expect(await status(a.customerId)).to.equal('active');

    const frozenAt = t0 + 40 * DAY;
    const auth2 = await login();
    expect((await request(h.app).post('/auth/unregister').set(auth2).send({ password: a.password })).body.status).to.equal('frozen');
    clock.setNow(frozenAt + 30 * DAY - HOUR);
    expect((await runLifecyclePass(h.db, [a.customerId])).deleted).to.not.include(a.customerId);
    expect(await status(a.customerId)).to.equal('frozen');

    const seen: string[] = [];
    const onDeleted = (id: string) => seen.push(id);
    accountEvents.on('customer_deleted', onDeleted);
    try {
      clock.setNow(frozenAt + 30 * DAY + HOUR);
      expect((await runLifecyclePass(h.db, [a.customerId])).deleted).to.include(a.customerId);
    } finally {
      accountEvents.off('customer_deleted', onDeleted);
    }
    expect(seen).to.include(a.customerId);
    expect(await status(a.customerId)).to.equal('deleted');
    expect(await h.db('agents').where({ customer_id: a.customerId })).to.have.length(0);
    expect(await h.db('accesskeys').where({ customer_id: a.customerId })).to.have.length(0);
    expect(await h.db('outbound_configs').where({ customer_id: a.customerId })).to.have.length(0);
    clock.setNow(frozenAt + HOUR); // inside the token's 7 days: refused because the agent is gone
    expect((await request(h.app).delete('/auth/unregister').set(auth2)).status).to.equal(401);
  });

  it('the cascade empties any table with a customer_id column, in foreign-key order, and leaves other customers alone', async () => {
    const a = await activeAccount(h);
    const b = await activeAccount(h);
    const sfx = crypto.randomBytes(3).toString('hex');
    const parent = `authtest_parent_${sfx}`;
    const child = `authtest_child_${sfx}`;
    await h.db.schema.createTable(parent, (t) => {
      t.uuid('id').primary();
      t.uuid('customer_id').notNullable();
    });
    // RESTRICT on purpose: the child rows must go first, whatever order the tables are listed in
    await h.db.schema.createTable(child, (t) => {
      t.uuid('id').primary();
      t.uuid('customer_id').notNullable();
      t.uuid('parent_id').notNullable().references('id').inTable(parent).onDelete('RESTRICT');
    });
    try {
      for (const c of [a.customerId, b.customerId]) {
        const pid = crypto.randomUUID();
        await h.db(parent).insert({ id: pid, customer_id: c });
        await h.db(child).insert({ id: crypto.randomUUID(), customer_id: c, parent_id: pid });
      }
      expect(await deleteCustomerAccount(h.db, a.customerId)).to.equal(true);
      expect(await h.db(parent).where({ customer_id: a.customerId })).to.have.length(0);
      expect(await h.db(child).where({ customer_id: a.customerId })).to.have.length(0);
      expect(await h.db(parent).where({ customer_id: b.customerId })).to.have.length(1);
      expect(await h.db(child).where({ customer_id: b.customerId })).to.have.length(1);
      expect(await h.db('agents').where({ customer_id: b.customerId })).to.have.length(1);
      expect(await deleteCustomerAccount(h.db, a.customerId)).to.equal(false); // already deleted
    } finally {
      await h.db.schema.dropTableIfExists(child);
      await h.db.schema.dropTableIfExists(parent);
    }
  });

  it('the BullMQ repeatable job runs the pass on its own', async function () {
    this.timeout(20_000);
    const email = uniqueEmail('bull');
    const s = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
    const id = s.body.customer.id;
    clock.setNow(Date.now() + 73 * HOUR);
    const prefix = `authtest-bull-${crypto.randomBytes(3).toString('hex')}`;
    const sched = await startLifecycleScheduler({ db: h.db, redisUrl: testUrls().redis, prefix, everyMs: 300, scope: [id] });
    try {
      const deadline = Date.now() + 15_000;
      while ((await status(id)) !== 'expired' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await status(id)).to.equal('expired');
    } finally {
      await sched.close();
      const keys = await h.redis.keys(`${prefix}:*`);
      if (keys.length) await h.redis.del(...keys);
    }
  });
});
