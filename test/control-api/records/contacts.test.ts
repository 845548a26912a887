import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, createFixture, type TestApp, type Fixture } from '../../../testkit/api';
import { newId } from '../../../core/ids';

describe('contacts and tags', function () {
  let t: TestApp;
  let f: Fixture;
  let other: Fixture;
  useTestApp((s) => ({ t, f } = s));
  before(async () => {
    other = await createFixture(t.ctx);
  });

  const api = (method: 'get' | 'post' | 'put' | 'delete', path: string, who: Fixture = f) => request(t.app)[method](`/v1.0${path}`).query({ accesskey: who.accesskey });
  const reason = (res: request.Response) => (res.body as { error?: { reason: string } }).error?.reason;

  async function newTag(name = `tag-${newId().slice(0, 8)}`): Promise<string> {
    const res = await api('post', '/tags').send({ name });
    expect(res.status).to.equal(200);
    return res.body.id as string;
  }

  it('creates a contact with normalized addresses and tags, gets, lists, updates and soft-deletes it', async () => {
    const tagId = await newTag();
    const res = await api('post', '/contacts').send({
      first_name: 'Ada',
      last_name: 'Lovelace',
      company: 'Engines',
      tag_ids: [tagId],
      addresses: [
        { type: 'tel', target: '+44 (20) 7946-0018', is_primary: true },
        { type: 'email', target: 'Ada@Example.TEST', name: 'work' },
      ],
    });
    expect(res.status).to.equal(201);
    const c = res.body;
    expect(c.source).to.equal('manual');
    expect(c.addresses.map((a: { target: string }) => a.target)).to.deep.equal(['+442079460018', 'Ada@Example.TEST']);
    expect(c.tag_ids).to.deep.equal([tagId]);
    expect(c.tm_delete).to.equal(null);

    expect((await api('get', `/contacts/${c.id}`)).body.first_name).to.equal('Ada');
    const list = await api('get', '/contacts');
    expect(list.body.result.map((x: { id: string }) => x.id)).to.include(c.id);

    const upd = await api('put', `/contacts/${c.id}`).send({ job_title: 'Analyst' });
    expect(upd.status).to.equal(200);
    expect(upd.body.job_title).to.equal('Analyst');
    expect(upd.body.first_name).to.equal('Ada');

    const byPhone = await request(t.app).get(`/v1.0/contacts/lookup?phone=%2B442079460018&accesskey=${f.accesskey}`);
    expect(byPhone.status).to.equal(200);
    expect(byPhone.body.id).to.equal(c.id);
    const byEmail = await api('get', '/contacts/lookup').query({ email: 'ada@EXAMPLE.test' });
    expect(byEmail.body.id).to.equal(c.id);
    // Another customer does not see it.
    expect((await api('get', `/contacts/${c.id}`, other)).status).to.equal(404);
    expect((await api('get', '/contacts/lookup', other).query({ email: 'ada@example.test' })).status).to.equal(404);

    const del = await api('delete', `/contacts/${c.id}`);
    expect(del.status).to.equal(200);
    expect(del.body.tm_delete).to.be.a('string');
    expect((await api('get', `/contacts/${c.id}`)).status).to.equal(404);
    expect((await api('get', '/contacts/lookup').query({ email: 'ada@example.test' })).status).to.equal(404);
    expect((await api('get', '/contacts')).body.result.map((x: { id: string }) => x.id)).to.not.include(c.id);
  });

  it('manages addresses and tags as sub-resources', async () => {
    const c = (await api('post', '/contacts').send({ display_name: 'Bob' })).body;
    let r = await api('post', `/contacts/${c.id}/addresses`).send({ type: 'tel', target: '0015550001111', is_primary: true });
    expect(r.status).to.equal(200);
    expect(r.body.addresses[0].target).to.equal('+15550001111');
    r = await api('post', `/contacts/${c.id}/addresses`).send({ type: 'tel', target: '+15550002222', is_primary: true });
    const [a1, a2] = r.body.addresses as { id: string; is_primary: boolean }[];
    expect([a1!.is_primary, a2!.is_primary]).to.deep.equal([false, true]);
    r = await api('put', `/contacts/${c.id}/addresses/${a1!.id}`).send({ target: '+1 555 000 3333', name: 'home' });
    expect(r.status).to.equal(200);
    expect(r.body.addresses[0]).to.include({ target: '+15550003333', name: 'home' });
    r = await api('delete', `/contacts/${c.id}/addresses/${a1!.id}`);
    expect(r.status).to.equal(200);
    expect(r.body.addresses).to.have.length(1);

    const tagId = await newTag();
    r = await api('post', `/contacts/${c.id}/tags`).send({ tag_id: tagId });
    expect(r.body.tag_ids).to.deep.equal([tagId]);
    r = await api('delete', `/contacts/${c.id}/tags/${tagId}`);
    expect(r.status).to.equal(200);
    expect(r.body.tag_ids).to.deep.equal([]);
  });

  it('refuses bad input on every contacts endpoint', async () => {
    const c = (await api('post', '/contacts').send({ display_name: 'Eve', addresses: [{ type: 'email', target: 'eve@example.test' }] })).body;
    const addrId = c.addresses[0].id as string;
    const missingId = newId();
    const cases: [string, request.Test, number, string][] = [
      ['create: unknown field', api('post', '/contacts').send({ nickname: 'x' }), 400, 'INVALID_ARGUMENT'],
      ['create: bad tel', api('post', '/contacts').send({ addresses: [{ type: 'tel', target: '12345' }] }), 400, 'INVALID_ARGUMENT'],
      ['create: bad email', api('post', '/contacts').send({ addresses: [{ type: 'email', target: 'nope' }] }), 400, 'INVALID_ARGUMENT'],
      ['create: bad type', api('post', '/contacts').send({ addresses: [{ type: 'fax', target: '+15550001111' }] }), 400, 'INVALID_ARGUMENT'],
      ['create: unknown tag', api('post', '/contacts').send({ tag_ids: [newId()] }), 400, 'INVALID_ARGUMENT'],
      ['create: tag not uuid', api('post', '/contacts').send({ tag_ids: ['x'] }), 400, 'INVALID_ARGUMENT'],
      ['create: not JSON object', api('post', '/contacts').set('Content-Type', 'application/json').send('[1]'), 400, 'INVALID_ARGUMENT'],
      ['create: long name', api('post', '/contacts').send({ first_name: 'x'.repeat(300) }), 400, 'INVALID_ARGUMENT'],
      ['list: bad page_size', api('get', '/contacts').query({ page_size: 'abc' }), 400, 'INVALID_REQUEST_PARAMETER'],
      ['list: bad page_token', api('get', '/contacts').query({ page_token: 'yesterday' }), 400, 'INVALID_REQUEST_PARAMETER'],
      ['get: bad id', api('get', '/contacts/not-a-uuid'), 400, 'INVALID_ID'],
      ['get: unknown', api('get', `/contacts/${missingId}`), 404, 'RESOURCE_NOT_FOUND'],
      ['put: bad field', api('put', `/contacts/${c.id}`).send({ first_name: 5 }), 400, 'INVALID_ARGUMENT'],
      ['put: unknown', api('put', `/contacts/${missingId}`).send({ first_name: 'x' }), 404, 'RESOURCE_NOT_FOUND'],
      ['put: bad id', api('put', '/contacts/zzz').send({ first_name: 'x' }), 400, 'INVALID_ID'],
      ['delete: bad id', api('delete', '/contacts/zzz'), 400, 'INVALID_ID'],
      ['delete: unknown', api('delete', `/contacts/${missingId}`), 404, 'RESOURCE_NOT_FOUND'],
      ['lookup: nothing', api('get', '/contacts/lookup'), 400, 'MISSING_REQUEST_PARAMETER'],
      ['lookup: both', api('get', '/contacts/lookup').query({ phone: '+15550001111', email: 'a@b.cd' }), 400, 'MISSING_REQUEST_PARAMETER'],
      ['lookup: unencoded +', request(t.app).get(`/v1.0/contacts/lookup?phone=+15550001111&accesskey=${f.accesskey}`), 400, 'INVALID_REQUEST_PARAMETER'],
      ['lookup: bad email', api('get', '/contacts/lookup').query({ email: 'no-at-sign' }), 400, 'INVALID_REQUEST_PARAMETER'],
      ['lookup: not found', api('get', '/contacts/lookup').query({ phone: '+15559999999' }), 404, 'RESOURCE_NOT_FOUND'],
      ['address add: missing type', api('post', `/contacts/${c.id}/addresses`).send({ target: '+15550001111' }), 400, 'INVALID_ARGUMENT'],
      ['address add: bad tel', api('post', `/contacts/${c.id}/addresses`).send({ type: 'tel', target: 'call me' }), 400, 'INVALID_ARGUMENT'],
      ['address add: unknown contact', api('post', `/contacts/${missingId}/addresses`).send({ type: 'tel', target: '+15550001111' }), 404, 'RESOURCE_NOT_FOUND'],
      ['address put: bad email', api('put', `/contacts/${c.id}/addresses/${addrId}`).send({ target: 'nope' }), 400, 'INVALID_ARGUMENT'],
      ['address put: type not changeable', api('put', `/contacts/${c.id}/addresses/${addrId}`).send({ type: 'tel' }), 400, 'INVALID_ARGUMENT'],
      ['address put: bad address id', api('put', `/contacts/${c.id}/addresses/xyz`).send({ name: 'x' }), 400, 'INVALID_ID'],
      ['address put: unknown address', api('put', `/contacts/${c.id}/addresses/${missingId}`).send({ name: 'x' }), 404, 'RESOURCE_NOT_FOUND'],
      ['address delete: unknown', api('delete', `/contacts/${c.id}/addresses/${missingId}`), 404, 'RESOURCE_NOT_FOUND'],
      ['address delete: bad id', api('delete', `/contacts/${c.id}/addresses/1`), 400, 'INVALID_ID'],
      ['tag add: missing tag_id', api('post', `/contacts/${c.id}/tags`).send({}), 400, 'INVALID_ARGUMENT'],
      ['tag add: unknown tag', api('post', `/contacts/${c.id}/tags`).send({ tag_id: missingId }), 400, 'INVALID_ARGUMENT'],
      ['tag add: unknown contact', api('post', `/contacts/${missingId}/tags`).send({ tag_id: missingId }), 400, 'INVALID_ARGUMENT'],
      ['tag delete: not attached', api('delete', `/contacts/${c.id}/tags/${missingId}`), 404, 'RESOURCE_NOT_FOUND'],
      ['tag delete: bad id', api('delete', `/contacts/${c.id}/tags/abc`), 400, 'INVALID_ID'],
      ['no credentials', request(t.app).get('/v1.0/contacts'), 401, 'AUTHENTICATION_REQUIRED'],
    ];
    for (const [name, req, status, why] of cases) {
      const res = await req;
      expect(res.status, name).to.equal(status);
      expect(reason(res), name).to.equal(why);
    }
  });

  it('tags: CRUD, unique names, bad input', async () => {
    const id = await newTag('VIP');
    expect((await api('post', '/tags').send({ name: 'vip' })).status).to.equal(409);
    expect((await api('post', '/tags').send({ name: '' })).status).to.equal(400);
    expect((await api('post', '/tags').send({ name: 'x', color: 'red' })).status).to.equal(400);
    expect((await api('get', `/tags/${id}`)).body.name).to.equal('VIP');
    expect((await api('put', `/tags/${id}`).send({ detail: 'best' })).body.detail).to.equal('best');
    expect((await api('get', '/tags')).body.result.map((x: { id: string }) => x.id)).to.include(id);
    expect((await api('get', `/tags/${id}`, other)).status).to.equal(404);
    expect((await api('get', '/tags/bad')).status).to.equal(400);
    expect((await api('delete', `/tags/${id}`)).status).to.equal(200);
    expect((await api('get', `/tags/${id}`)).status).to.equal(404);
    expect((await api('post', '/tags').send({ name: 'VIP' })).status).to.equal(200);
  });
});
