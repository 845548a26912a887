import { expect } from 'chai';
import { startHarness, actors, reset, as, superAdmin, type Harness, type Actors } from './support';
import type { Fixture } from '../../../testkit/api';
import { clock } from '../../../core/clock';
import { setRates } from '../../../core/billing/rates';
import { ensureBillingAccount, charge, startCallBilling, endCallBilling, chargeCallMinutes, assertCallAffordable, billableMinutes, insufficientBalance } from '../../../core/billing';
import { newId } from '../../../core/ids';

describe('billing', function () {
  let h: Harness;
  let a: Actors;
  let su: Fixture;
  const db = () => h.t.ctx.db;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    setRates(null);
    clock.reset();
    await h.close();
  });
  beforeEach(async () => {
    await reset();
    setRates({ call_pstn_outgoing: 20_000, call_vn: 0 });
    a = await actors(h);
    su = await superAdmin(h);
  });

  const accountOf = async (token: string) => {
    const r = await as(h, token).get('/v1.0/billing-accounts');
    expect(r.status).to.equal(200);
    expect(r.body.result).to.have.length(1);
    return r.body.result[0];
  };

  it('every customer has one account, created on first use and linked from the customer', async () => {
    const acc = await accountOf(a.admin);
    expect(acc).to.include({ customer_id: a.customerId, balance_credit: 0, balance: 0, status: 'active' });
    expect((await accountOf(a.admin)).id).to.equal(acc.id);
    const customer = await db()('customers').where({ id: a.customerId }).first();
    expect(customer!.billing_account_id).to.equal(acc.id);
    expect((await as(h, a.admin).get(`/v1.0/billing-accounts/${acc.id}`)).body.id).to.equal(acc.id);
    expect((await as(h, a.manager).get('/v1.0/billing-accounts')).status).to.equal(403);
  });

  it('balance-add: ProjectSuperAdmin only, ledger row written, idempotent with a key', async () => {
    const acc = await accountOf(a.admin);
    const denied = await as(h, a.admin).post(`/v1.0/billing-accounts/${acc.id}/balance-add`).send({ balance: 10 });
    expect(denied.status).to.equal(403);
    expect(denied.body.error.reason).to.equal('PERMISSION_DENIED');

    const sa = as(h, su.token);
    const add = await sa.post(`/v1.0/billing-accounts/${acc.id}/balance-add`).set('Idempotency-Key', 'topup-1').send({ balance: 12.5 });
    expect(add.status, JSON.stringify(add.body)).to.equal(200);
    expect(add.body).to.include({ balance_credit: 12_500_000, balance: 12.5 });
    expect(add.body.tm_last_topup).to.not.equal('9999-01-01 00:00:00.000000');
    const again = await sa.post(`/v1.0/billing-accounts/${acc.id}/balance-add`).set('Idempotency-Key', 'topup-1').send({ balance: 12.5 });
    expect(again.body.balance_credit).to.equal(12_500_000);
    // VoIPbin's spelling works too.
    const alias = await sa.post(`/v1.0/billing_accounts/${acc.id}/balance_add_force`).send({ balance_credit: 500_000 });
    expect(alias.body.balance_credit).to.equal(13_000_000);

    const bills = await as(h, a.admin).get('/v1.0/billings');
    expect(bills.body.result.map((b: { amount_credit: number }) => b.amount_credit)).to.have.members([12_500_000, 500_000]);
    expect(bills.body.result[0]).to.include({ transaction_type: 'top_up', account_id: acc.id });
    const one = await as(h, a.admin).get(`/v1.0/billings/${bills.body.result[0].id}`);
    expect(one.status).to.equal(200);

    // The super admin sees every account; others only their own; cross-customer 404.
    expect((await sa.get('/v1.0/billing-accounts')).body.result.length).to.be.at.least(2);
    const other = await actors(h);
    expect((await as(h, other.admin).get(`/v1.0/billing-accounts/${acc.id}`)).status).to.equal(404);
    expect((await as(h, other.admin).get(`/v1.0/billings/${bills.body.result[0].id}`)).body.error.reason).to.equal('BILLING_NOT_FOUND');

    for (const body of [{}, { balance: -1 }, { balance: 0 }, { balance: 1, balance_credit: 1 }, { balance_credit: 1.5 }, { balance: 'ten' }]) {
      expect((await sa.post(`/v1.0/billing-accounts/${acc.id}/balance-add`).send(body)).status, JSON.stringify(body)).to.equal(400);
    }
    const missing = await sa.post(`/v1.0/billing-accounts/${newId()}/balance-add`).send({ balance: 1 });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.reason).to.equal('BILLING_ACCOUNT_NOT_FOUND');
  });

  it('charge: 402 without touching the balance, idempotent by key', async () => {
    const acc = await ensureBillingAccount(db(), a.customerId);
    await db()('billing_accounts').where({ id: acc.id }).update({ balance_credit: 100 });
    const input = { customerId: a.customerId, amount: 60, costType: 'sms' as const, referenceType: 'sms' as const, referenceId: newId(), idempotencyKey: 'k1' };
    const first = await charge(db(), input);
    const second = await charge(db(), input);
    expect(second.id).to.equal(first.id);
    expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(40);
    try {
      await charge(db(), { ...input, idempotencyKey: 'k2' });
      expect.fail('should be 402');
    } catch (e) {
      expect((e as { http: number; reason: string }).http).to.equal(402);
      expect((e as { reason: string }).reason).to.equal('INSUFFICIENT_BALANCE');
    }
    expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(40);
    expect(await db()('billings').where({ idempotency_key: 'k2' })).to.have.length(0);
    expect(insufficientBalance().http).to.equal(402);
  });

  it('per-minute call charges: 402 before the call, minutes rounded up at hangup, once', async () => {
    const acc = await ensureBillingAccount(db(), a.customerId);
    const callId = newId();
    try {
      await startCallBilling(db(), { customerId: a.customerId, callId, costType: 'call_pstn_outgoing' });
      expect.fail('should be 402');
    } catch (e) {
      expect((e as { reason: string }).reason).to.equal('INSUFFICIENT_BALANCE');
    }
    // Free call types pass with an empty balance.
    await assertCallAffordable(db(), a.customerId, 'call_vn');

    await db()('billing_accounts').where({ id: acc.id }).update({ balance_credit: 50_000 });
    clock.setNow(Date.parse('2026-01-01T00:00:00Z'));
    const start = await startCallBilling(db(), { customerId: a.customerId, callId, costType: 'call_pstn_outgoing' });
    expect(start.status).to.equal('progressing');
    expect((await startCallBilling(db(), { customerId: a.customerId, callId, costType: 'call_pstn_outgoing' })).id).to.equal(start.id);
    clock.advance(125_000); // 2 min 5 s -> 3 minutes
    const end = await endCallBilling(db(), { callId });
    expect(end).to.include({ status: 'end', usage_duration: 125, billable_units: 3, amount_credit: -60_000, balance_credit_snapshot: -10_000 });
    // A finished call is charged even into the red, and only once.
    clock.advance(60_000);
    expect((await endCallBilling(db(), { callId }))?.amount_credit).to.equal(-60_000);
    expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(-10_000);
    expect(await endCallBilling(db(), { callId: newId() })).to.equal(null);

    const oneShot = await chargeCallMinutes(db(), { customerId: a.customerId, callId: newId(), costType: 'call_pstn_outgoing', seconds: 60 });
    expect(oneShot).to.include({ billable_units: 1, amount_credit: -20_000 });
    expect([billableMinutes(0), billableMinutes(1), billableMinutes(60), billableMinutes(61)]).to.deep.equal([0, 1, 1, 2]);
  });
});
