// /storage_accounts: ProjectSuperAdmin lists, creates and deletes; a customer admin reads only its own by id.
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';
import { newId } from '../../../core/ids';
import { storageBackend } from '../../../core/storage/backend';

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

  it('the operator deletes an account: its files and their objects go, then the account; the next upload gets an empty one', async () => {
    const up = await as(pt.h, pt.a.admin)
      .post('/v1.0/storage_files')
      .send({ filename: 'a.txt', content: Buffer.from('hello storage').toString('base64'), content_type: 'text/plain' });
    expect(up.status, JSON.stringify(up.body)).to.be.oneOf([200, 201]);
    const row = await pt.h.t.ctx.db('storage_files').where({ id: up.body.id }).first();
    const store = storageBackend(pt.h.t.ctx.config).files;
    expect(await store.get(row!.object_key), 'the object is stored').to.not.equal(null);
    const account = (await as(pt.h, pt.a.admin).get('/v1.0/storage_account')).body;
    expect(account.total_file_count).to.equal(1);

    // not the customer's admin, not an unknown or malformed id
    expect((await as(pt.h, pt.a.admin).delete(`/v1.0/storage_accounts/${account.id}`)).status).to.equal(403);
    expect((await as(pt.h, pt.su.token).delete(`/v1.0/storage_accounts/${newId()}`)).body.error.reason).to.equal('ACCOUNT_NOT_FOUND');
    expect((await as(pt.h, pt.su.token).delete('/v1.0/storage_accounts/x')).status).to.equal(400);

    const del = await as(pt.h, pt.su.token).delete(`/v1.0/storage_accounts/${account.id}`);
    expect(del.status, JSON.stringify(del.body)).to.equal(200);
    expect(del.body).to.include({ id: account.id, customer_id: pt.a.customerId, total_file_count: 0 });
    expect(del.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    expect(await store.get(row!.object_key), 'the object is removed from the backend').to.equal(null);
    expect((await as(pt.h, pt.a.admin).get(`/v1.0/storage_files/${up.body.id}`)).status).to.equal(404);
    expect((await as(pt.h, pt.su.token).get(`/v1.0/storage_accounts/${account.id}`)).status).to.equal(404);
    expect((await as(pt.h, pt.su.token).delete(`/v1.0/storage_accounts/${account.id}`)).status).to.equal(404);
    const list = await as(pt.h, pt.su.token).get('/v1.0/storage_accounts');
    expect(list.body.result.map((x: { id: string }) => x.id)).to.not.include(account.id);
    // the customer can store again: its account comes back empty
    const back = (await as(pt.h, pt.a.admin).get('/v1.0/storage_account')).body;
    expect([back.id, back.total_file_count, back.tm_delete]).to.deep.equal([account.id, 0, account.tm_delete]);
  });
});
