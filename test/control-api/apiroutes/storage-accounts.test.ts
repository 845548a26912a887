// /storage_accounts: ProjectSuperAdmin lists and creates; a customer admin reads only its own by id.
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';
import { newId } from '../../../core/ids';

describe('/storage_accounts', function () {
  this.timeout(20000);
  const pt = useParties();

  it('the operator creates one account per customer and lists all; bad input is refused', async () => {
    const c = await as(pt.h, pt.su.token).post('/v1.0/storage_accounts').send({ customer_id: pt.a.customerId });
    expect([c.status, c.body.customer_id, c.body.total_file_count, c.body.total_file_size]).to.deep.equal([200, pt.a.customerId, 0, 0]);
    const again = await as(pt.h, pt.su.token).post('/v1.0/storage_accounts').send({ customer_id: pt.a.customerId });
    expect([again.status, again.body.error.reason]).to.deep.equal([409, 'ALREADY_EXISTS']);
    const none = await as(pt.h, pt.su.token).post('/v1.0/storage_accounts').send({ customer_id: newId() });
    expect([none.status, none.body.error.reason]).to.deep.equal([404, 'RESOURCE_NOT_FOUND']);
    for (const body of [{}, { customer_id: 'x' }, { customer_id: pt.a.customerId, quota_bytes: 1 }]) {
      const b = await as(pt.h, pt.su.token).post('/v1.0/storage_accounts').send(body);
      expect([b.status, b.body.error.reason], JSON.stringify(body)).to.deep.equal([400, 'INVALID_ARGUMENT']);
    }
    await as(pt.h, pt.other.admin).get('/v1.0/storage_account').expect(200); // made on first use
    const list = await as(pt.h, pt.su.token).get('/v1.0/storage_accounts');
    expect(list.body.result.map((x: { customer_id: string }) => x.customer_id)).to.have.members([pt.a.customerId, pt.other.customerId]);
  });

  it('a customer admin may not list or create, and reads only its own account by id', async () => {
    expect((await as(pt.h, pt.a.admin).get('/v1.0/storage_accounts')).status).to.equal(403);
    expect((await as(pt.h, pt.a.admin).post('/v1.0/storage_accounts').send({ customer_id: pt.a.customerId })).status).to.equal(403);
    const mine = (await as(pt.h, pt.a.admin).get('/v1.0/storage_account')).body.id as string;
    const theirs = (await as(pt.h, pt.other.admin).get('/v1.0/storage_account')).body.id as string;
    expect((await as(pt.h, pt.a.admin).get(`/v1.0/storage_accounts/${mine}`)).body.id).to.equal(mine);
    const r = await as(pt.h, pt.a.admin).get(`/v1.0/storage_accounts/${theirs}`);
    expect([r.status, r.body.error.reason]).to.deep.equal([404, 'ACCOUNT_NOT_FOUND']);
    expect((await as(pt.h, pt.su.token).get(`/v1.0/storage_accounts/${theirs}`)).body.customer_id).to.equal(pt.other.customerId);
    expect((await as(pt.h, pt.a.manager).get(`/v1.0/storage_accounts/${mine}`)).status).to.equal(403);
  });
});
