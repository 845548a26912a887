// /billing_account, /billing_accounts/{id} updates and balance_subtract_force, /customer/metadata,
// /customer/billing_account_id and /outbound_config: permissions (admin; ProjectSuperAdmin for another
// customer's account and for the subtract) and bad input.
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';
import { newId } from '../../../core/ids';

describe('own account settings, billing accounts and outbound config', function () {
  this.timeout(20000);
  const pt = useParties();
  const accountOf = async (token: string) => (await as(pt.h, token).get('/v1.0/billing_account').expect(200)).body as { id: string; balance_credit: number };

  it("GET/PUT /billing_account and payment_info are the admin's own account; lower levels get 403", async () => {
    const acc = await accountOf(pt.a.admin);
    expect((await as(pt.h, pt.a.admin).get('/v1.0/customer')).body.billing_account_id).to.equal(acc.id);
    const put = await as(pt.h, pt.a.admin).put('/v1.0/billing_account').send({ name: 'Prod', detail: 'main' });
    expect([put.status, put.body.id, put.body.name, put.body.detail]).to.deep.equal([200, acc.id, 'Prod', 'main']);
    const pay = await as(pt.h, pt.a.admin).put('/v1.0/billing_account/payment_info').send({ payment_type: 'prepaid', payment_method: 'credit card' });
    expect([pay.status, pay.body.payment_type, pay.body.payment_method, pay.body.name]).to.deep.equal([200, 'prepaid', 'credit card', 'Prod']);
    for (const tok of [pt.a.manager, pt.a.agent]) {
      expect((await as(pt.h, tok).get('/v1.0/billing_account')).status).to.equal(403);
      expect((await as(pt.h, tok).put('/v1.0/billing_account').send({ name: 'x' })).status).to.equal(403);
    }
    const bad = await as(pt.h, pt.a.admin).put('/v1.0/billing_account/payment_info').send({ payment_type: 'postpaid' });
    expect([bad.status, bad.body.error.reason, bad.body.error.details[0].field]).to.deep.equal([400, 'INVALID_ARGUMENT', 'payment_type']);
    const unknown = await as(pt.h, pt.a.admin).put('/v1.0/billing_account').send({ balance_credit: 1 });
    expect([unknown.status, unknown.body.error.details[0].field]).to.deep.equal([400, 'balance_credit']);
  });

  it("PUT /billing_accounts/{id}: another customer's account is not found, except for a ProjectSuperAdmin", async () => {
    const theirs = await accountOf(pt.other.admin);
    for (const p of [`/v1.0/billing_accounts/${theirs.id}`, `/v1.0/billing_accounts/${theirs.id}/payment_info`]) {
      const r = await as(pt.h, pt.a.admin).put(p).send({});
      expect([r.status, r.body.error.reason], p).to.deep.equal([404, 'BILLING_ACCOUNT_NOT_FOUND']);
    }
    const ok = await as(pt.h, pt.su.token).put(`/v1.0/billing_accounts/${theirs.id}`).send({ name: 'by operator' });
    expect([ok.status, ok.body.name, ok.body.customer_id]).to.deep.equal([200, 'by operator', pt.other.customerId]);
    expect((await as(pt.h, pt.a.admin).put(`/v1.0/billing_accounts/${newId()}/payment_info`).send({ payment_method: '' })).status).to.equal(404);
    expect((await as(pt.h, pt.a.admin).put('/v1.0/billing_accounts/nope').send({})).body.error.reason).to.equal('INVALID_ID');
  });

  it('balance_subtract_force: ProjectSuperAdmin only, writes an adjustment, refuses bad amounts', async () => {
    const mine = await accountOf(pt.a.admin);
    const denied = await as(pt.h, pt.a.admin).post(`/v1.0/billing_accounts/${mine.id}/balance_subtract_force`).send({ balance: 1 });
    expect([denied.status, denied.body.error.reason]).to.deep.equal([403, 'PERMISSION_DENIED']);
    const r = await as(pt.h, pt.su.token).post(`/v1.0/billing_accounts/${mine.id}/balance_subtract_force`).set('Idempotency-Key', 'k1').send({ balance: 1.25 });
    expect([r.status, r.body.balance_credit]).to.deep.equal([200, mine.balance_credit - 1_250_000]);
    const again = await as(pt.h, pt.su.token).post(`/v1.0/billing_accounts/${mine.id}/balance_subtract_force`).set('Idempotency-Key', 'k1').send({ balance: 1.25 });
    expect(again.body.balance_credit, 'a retry with the same key subtracts once').to.equal(r.body.balance_credit);
    const rows = await pt.h.t.ctx.db('billings').where({ account_id: mine.id, transaction_type: 'adjustment' });
    expect(rows.map((x: { amount_credit: string | number }) => Number(x.amount_credit))).to.deep.equal([-1_250_000]);
    for (const body of [{}, { balance: -1 }, { balance: 0 }, { balance: 1, balance_credit: 5 }, { balance: 'one' }]) {
      const b = await as(pt.h, pt.su.token).post(`/v1.0/billing_accounts/${mine.id}/balance_subtract_force`).send(body);
      expect([b.status, b.body.error.reason], JSON.stringify(body)).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    const missing = await as(pt.h, pt.su.token).post(`/v1.0/billing_accounts/${newId()}/balance_subtract_force`).send({ balance: 1 });
    expect([missing.status, missing.body.error.reason]).to.deep.equal([404, 'BILLING_ACCOUNT_NOT_FOUND']);
  });

  it('PUT /customer/metadata merges flags; PUT /customer/billing_account_id takes only an own account', async () => {
    const m = await as(pt.h, pt.a.admin).put('/v1.0/customer/metadata').send({ rtp_debug: true });
    expect([m.status, m.body.metadata]).to.deep.equal([200, { rtp_debug: true }]);
    expect((await as(pt.h, pt.a.admin).put('/v1.0/customer/metadata').send({})).body.metadata, 'absent flags keep their value').to.deep.equal({ rtp_debug: true });
    for (const body of [{ rtp_debug: 'true' }, { other: 1 }]) {
      const b = await as(pt.h, pt.a.admin).put('/v1.0/customer/metadata').send(body);
      expect([b.status, b.body.error.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    expect((await as(pt.h, pt.a.manager).put('/v1.0/customer/metadata').send({ rtp_debug: false })).status).to.equal(403);

    const mine = await accountOf(pt.a.admin);
    const theirs = await accountOf(pt.other.admin);
    const ok = await as(pt.h, pt.a.admin).put('/v1.0/customer/billing_account_id').send({ billing_account_id: mine.id });
    expect([ok.status, ok.body.billing_account_id]).to.deep.equal([200, mine.id]);
    const foreign = await as(pt.h, pt.a.admin).put('/v1.0/customer/billing_account_id').send({ billing_account_id: theirs.id });
    expect([foreign.status, foreign.body.error.reason]).to.deep.equal([404, 'BILLING_ACCOUNT_NOT_FOUND']);
    const bad = await as(pt.h, pt.a.admin).put('/v1.0/customer/billing_account_id').send({ billing_account_id: 'x' });
    expect([bad.status, bad.body.error.details[0].field]).to.deep.equal([400, 'billing_account_id']);
    expect((await as(pt.h, pt.a.admin).put('/v1.0/customer/billing_account_id').send({})).body.error.details[0]).to.deep.equal({ field: 'billing_account_id', issue: 'required' });
  });

  it("GET/PUT /outbound_config: the customer's dialling config, validated as /outbound_configs; 404 when none is left", async () => {
    const g = await as(pt.h, pt.a.admin).get('/v1.0/outbound_config');
    expect([g.status, g.body.id, g.body.customer_id]).to.deep.equal([200, pt.a.fx.outboundConfig.id, pt.a.customerId]);
    const p = await as(pt.h, pt.a.admin)
      .put('/v1.0/outbound_config')
      .send({ destination_whitelist: ['us', 'us', 'gb'] });
    expect([p.status, p.body.destination_whitelist, p.body.id]).to.deep.equal([200, ['us', 'gb'], pt.a.fx.outboundConfig.id]);
    const used = await pt.h.t.ctx.repos.outboundConfigs.getForCustomer(pt.a.customerId);
    expect(used?.destination_whitelist).to.deep.equal(['us', 'gb']);
    for (const body of [{ destination_whitelist: ['US'] }, { destination_whitelist: ['zz'] }, { codecs: 'a,,b' }, { default_outgoing_source_number_id: newId() }, { customer_id: newId() }]) {
      const b = await as(pt.h, pt.a.admin).put('/v1.0/outbound_config').send(body);
      expect([b.status, b.body.error.reason], JSON.stringify(body)).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    expect((await as(pt.h, pt.a.manager).get('/v1.0/outbound_config')).status).to.equal(403);
    await as(pt.h, pt.a.admin).delete(`/v1.0/outbound_configs/${pt.a.fx.outboundConfig.id}`).expect(200);
    const none = await as(pt.h, pt.a.admin).get('/v1.0/outbound_config');
    expect([none.status, none.body.error.reason]).to.deep.equal([404, 'RESOURCE_NOT_FOUND']);
    expect((await as(pt.h, pt.a.admin).put('/v1.0/outbound_config').send({ name: 'x' })).status).to.equal(404);
  });
});
