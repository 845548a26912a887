import { expect } from 'chai';
import { startHarness, actors, reset, as, superAdmin, EMPTY, type Harness, type Actors } from './support';
import { setRates } from '../../../core/billing/rates';
import { setNumberInventory, NumberInventory, parseInventory } from '../../../core/numbers/inventory';
import { isE164, virtualNumberProblem, randomVirtualNumber } from '../../../core/numbers/e164';
import { setFlowExistenceCheck } from '../../../core/numbers/flow-refs';
import { addBalance, ensureBillingAccount } from '../../../core/billing/ledger';

describe('numbers', function () {
  let h: Harness;
  let a: Actors;
  const db = () => h.t.ctx.db;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    setNumberInventory(null);
    setRates(null);
    await h.close();
  });
  beforeEach(async () => {
    await reset();
    setRates({ number: 1_000_000, number_renew: 500_000 });
    setNumberInventory(new NumberInventory(parseInventory([{ from: '+14155550100', to: '+14155550104', country: 'US', region: 'CA' }])));
    a = await actors(h);
  });
  afterEach(() => setFlowExistenceCheck(null));

  const verify = (customerId: string) => db()('customers').where({ id: customerId }).update({ identity_verification_status: 'verified' });
  const fund = async (customerId: string, micros: number) => {
    const acc = await ensureBillingAccount(db(), customerId);
    await addBalance(db(), acc.id, micros, `test:${acc.id}:${micros}:${Math.random()}`);
  };
  const countRows = async (table: string, customerId: string) => Number((await db()(table).where({ customer_id: customerId }).count({ n: '*' }))[0].n);

  describe('rules', () => {
    it('E.164 and virtual number validation', () => {
      expect(isE164('+14155550100')).to.equal(true);
      for (const bad of ['14155550100', '+0123456789', '+1 415 555', '+1-415-555-0100', '+1234567890123456', '+12345']) expect(isE164(bad), bad).to.equal(false);
      expect(virtualNumberProblem('+899123456789')).to.equal(null);
      expect(virtualNumberProblem('+899000123456')).to.match(/reserved/);
      expect(virtualNumberProblem('+89912345678')).to.match(/digits/);
      expect(virtualNumberProblem('+14155550100')).to.match(/starts with/);
      for (let i = 0; i < 200; i++) expect(virtualNumberProblem(randomVirtualNumber())).to.equal(null);
    });
  });

  describe('virtual numbers', () => {
    it('are free, need no verification, and run the CRUD cycle', async () => {
      const api = as(h, a.manager);
      const avail = await api.get('/v1.0/available_numbers').query({ type: 'virtual', page_size: '3' });
      expect(avail.status).to.equal(200);
      expect(avail.body.result).to.have.length(3);
      const num = avail.body.result[0].number as string;
      expect(virtualNumberProblem(num)).to.equal(null);

      const created = await api.post('/v1.0/numbers').send({ number: num, name: 'support' });
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      expect(created.body).to.include({ number: num, type: 'virtual', status: 'active', name: 'support', call_flow_id: EMPTY, message_flow_id: EMPTY, customer_id: a.customerId });
      expect(created.body.tm_delete).to.equal('9999-01-01 00:00:00.000000');
      expect(await countRows('billings', a.customerId)).to.equal(0);

      const flowId = (await api.post('/v1.0/flows').send({ actions: [{ type: 'answer' }] })).body.id as string;
      const upd = await api.put(`/v1.0/numbers/${created.body.id}`).send({ call_flow_id: flowId, detail: 'd' });
      expect(upd.status).to.equal(200);
      expect(upd.body).to.include({ call_flow_id: flowId, message_flow_id: EMPTY, name: 'support', detail: 'd' });
      expect(upd.body.tm_update).to.not.equal('9999-01-01 00:00:00.000000');

      const list = await as(h, a.agent).get('/v1.0/numbers');
      expect(list.status).to.equal(200);
      expect(list.body.result.map((n: { id: string }) => n.id)).to.deep.equal([created.body.id]);

      const again = await api.post('/v1.0/numbers').send({ number: num });
      expect(again.status).to.equal(409);

      const del = await api.delete(`/v1.0/numbers/${created.body.id}`);
      expect(del.status).to.equal(200);
      expect(del.body.status).to.equal('deleted');
      expect((await api.get(`/v1.0/numbers/${created.body.id}`)).status).to.equal(404);
      expect((await api.get('/v1.0/numbers')).body.result).to.have.length(0);
      // Released: someone else may take it now.
      expect((await api.post('/v1.0/numbers').send({ number: num })).status).to.equal(200);
    });

    it('rejects reserved, malformed and mistyped numbers with 400', async () => {
      const api = as(h, a.admin);
      for (const body of [
        { number: '+899000111222' },
        { number: '+8991234' },
        { number: '4155550100' },
        { number: '+1 415 555 0100' },
        { number: '+899123456789', type: 'normal' },
        { number: '+14155550100', type: 'virtual' },
        { number: '+899123456789', call_flow_id: 'not-a-uuid' },
        {},
      ]) {
        const r = await api.post('/v1.0/numbers').send(body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
      }
    });

    it('checks flow references through the hook the flows work fills in', async () => {
      setFlowExistenceCheck(async (_db, _c, id) => id === '5e0f4c1a-1111-4222-8333-444455556666');
      const api = as(h, a.admin);
      const bad = await api.post('/v1.0/numbers').send({ number: '+899123000001', call_flow_id: '6e0f4c1a-1111-4222-8333-444455556666' });
      expect(bad.status).to.equal(404);
      expect(bad.body.error.reason).to.equal('FLOW_NOT_FOUND');
      const ok = await api.post('/v1.0/numbers').send({ number: '+899123000001', call_flow_id: '5e0f4c1a-1111-4222-8333-444455556666' });
      expect(ok.status).to.equal(200);
    });
  });

  describe('normal numbers', () => {
    it('need a verified identity: 403 IDENTITY_VERIFICATION_REQUIRED, nothing written', async () => {
      await fund(a.customerId, 5_000_000);
      const r = await as(h, a.admin).post('/v1.0/numbers').send({ number: '+14155550100' });
      expect(r.status).to.equal(403);
      expect(r.body.error.reason).to.equal('IDENTITY_VERIFICATION_REQUIRED');
      expect(await countRows('numbers', a.customerId)).to.equal(0);
    });

    it('insufficient balance: 402 INSUFFICIENT_BALANCE, no number and no charge', async () => {
      await verify(a.customerId);
      await fund(a.customerId, 999_999);
      const r = await as(h, a.admin).post('/v1.0/numbers').send({ number: '+14155550100' });
      expect(r.status).to.equal(402);
      expect(r.body.error).to.include({ status: 'PAYMENT_REQUIRED', reason: 'INSUFFICIENT_BALANCE' });
      expect(await countRows('numbers', a.customerId)).to.equal(0);
      expect(await db()('billings').where({ customer_id: a.customerId, transaction_type: 'usage' })).to.have.length(0);
      expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(999_999);
    });

    it('verified and funded: bought, charged once, listed as unavailable, renewed', async () => {
      await verify(a.customerId);
      await fund(a.customerId, 2_000_000);
      const api = as(h, a.admin);
      const avail = await api.get('/v1.0/available_numbers').query({ country_code: 'US' });
      expect(avail.status).to.equal(200);
      expect(avail.body.result.map((n: { number: string }) => n.number)).to.deep.equal(['+14155550100', '+14155550101', '+14155550102', '+14155550103', '+14155550104']);
      expect(avail.body.result[0]).to.include({ country: 'US', region: 'CA' });

      const r = await api.post('/v1.0/numbers').send({ number: '+14155550101', name: 'main' });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ type: 'normal', number: '+14155550101' });
      expect(r.body.tm_purchase).to.not.equal('9999-01-01 00:00:00.000000');
      const acc = await ensureBillingAccount(db(), a.customerId);
      expect(acc.balance_credit).to.equal(1_000_000);
      const bills = await api.get('/v1.0/billings');
      const usage = bills.body.result.filter((b: { transaction_type: string }) => b.transaction_type === 'usage');
      expect(usage).to.have.length(1);
      expect(usage[0]).to.include({ cost_type: 'number', reference_type: 'number', reference_id: r.body.id, amount_credit: -1_000_000, balance_credit_snapshot: 1_000_000 });

      const after = await api.get('/v1.0/available_numbers').query({ country_code: 'us', page_size: '2' });
      expect(after.body.result.map((n: { number: string }) => n.number)).to.deep.equal(['+14155550100', '+14155550102']);

      // Not in the inventory: 400; taken: 409.
      expect((await api.post('/v1.0/numbers').send({ number: '+14155550199' })).status).to.equal(400);
      const other = await superAdmin(h);
      await verify(other.customer.id);
      await fund(other.customer.id, 5_000_000);
      expect((await as(h, other.token).post('/v1.0/numbers').send({ number: '+14155550101' })).status).to.equal(409);

      const renewed = await api.post('/v1.0/numbers/renew').send({ tm_renew: '2999-01-01 00:00:00.000000' });
      expect(renewed.status, JSON.stringify(renewed.body)).to.equal(200);
      expect(renewed.body).to.have.length(1);
      expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(500_000);
      // A second renewal with 500000 left works once, then 402 and nothing changes.
      expect((await api.post('/v1.0/numbers/renew').send({ number_ids: [r.body.id] })).status).to.equal(200);
      const broke = await api.post('/v1.0/numbers/renew').send({ number_ids: [r.body.id] });
      expect(broke.status).to.equal(402);
      expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(0);
      // Nothing due before the purchase.
      expect((await api.post('/v1.0/numbers/renew').send({ tm_renew: '2000-01-01 00:00:00.000000' })).body).to.deep.equal([]);
      expect((await api.post('/v1.0/numbers/renew').send({})).status).to.equal(400);
    });

    it('races: one owner per number, and parallel purchases never overdraw', async () => {
      const other = await actors(h);
      const [r1, r2] = await Promise.all([as(h, a.admin).post('/v1.0/numbers').send({ number: '+899777000111' }), as(h, other.admin).post('/v1.0/numbers').send({ number: '+899777000111' })]);
      expect([r1.status, r2.status].sort()).to.deep.equal([200, 409]);

      await verify(a.customerId);
      await fund(a.customerId, 1_500_000);
      const buys = await Promise.all(['+14155550102', '+14155550103', '+14155550104'].map((number) => as(h, a.admin).post('/v1.0/numbers').send({ number })));
      expect(buys.map((b) => b.status).sort()).to.deep.equal([200, 402, 402]);
      expect((await ensureBillingAccount(db(), a.customerId)).balance_credit).to.equal(500_000);
      expect(await db()('numbers').where({ customer_id: a.customerId, type: 'normal' })).to.have.length(1);
    });

    it('available numbers of a normal type need country_code', async () => {
      const r = await as(h, a.agent).get('/v1.0/available_numbers');
      expect(r.status).to.equal(400);
      expect(r.body.error.reason).to.equal('MISSING_REQUEST_PARAMETER');
      expect((await as(h, a.agent).get('/v1.0/available_numbers').query({ country_code: 'USA' })).status).to.equal(400);
      expect((await as(h, a.agent).get('/v1.0/available_numbers').query({ country_code: 'FR' })).body.result).to.deep.equal([]);
    });
  });

  describe('permissions and ownership', () => {
    it('agents read but cannot buy, change or release; other customers get 404', async () => {
      const mine = await as(h, a.manager).post('/v1.0/numbers').send({ number: '+899555000111' });
      expect(mine.status).to.equal(200);
      const agent = as(h, a.agent);
      expect((await agent.post('/v1.0/numbers').send({ number: '+899555000112' })).status).to.equal(403);
      expect((await agent.put(`/v1.0/numbers/${mine.body.id}`).send({ name: 'x' })).status).to.equal(403);
      expect((await agent.delete(`/v1.0/numbers/${mine.body.id}`)).status).to.equal(403);
      expect((await agent.get(`/v1.0/numbers/${mine.body.id}`)).status).to.equal(200);

      const other = await actors(h);
      const o = as(h, other.admin);
      for (const r of [await o.get(`/v1.0/numbers/${mine.body.id}`), await o.put(`/v1.0/numbers/${mine.body.id}`).send({ name: 'stolen' }), await o.delete(`/v1.0/numbers/${mine.body.id}`)]) {
        expect(r.status).to.equal(404);
        expect(r.body.error.reason).to.equal('NUMBER_NOT_FOUND');
      }
      expect((await o.get('/v1.0/numbers')).body.result).to.deep.equal([]);
      expect((await o.get('/v1.0/numbers/not-a-uuid')).body.error.reason).to.equal('INVALID_ID');
      expect((await as(h, a.manager).get(`/v1.0/numbers/${mine.body.id}`)).body.name).to.equal('');
    });
  });
});
