import { expect } from 'chai';
import request from 'supertest';
import { EMPTY_UUID, newId } from '../../core/ids';
import { startRig, team, expectError, type Rig, type Team } from './support';

describe('service-agent API: contact writes, contact addresses and claim', function () {
  this.timeout(60_000);
  let rig: Rig;
  let tm: Team;
  let other: Team;
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const sa = (method: 'get' | 'post' | 'put' | 'delete', path: string, token = tm.a.token) => request(rig.t.app)[method](`/v1.0/service_agents${path}`).set(bearer(token));

  before(async () => {
    rig = await startRig();
    tm = await team(rig);
    other = await team(rig);
  });
  after(async () => rig.close());

  async function tagOf(token: string, name: string): Promise<string> {
    const res = await request(rig.t.app).post('/v1.0/tags').set(bearer(token)).send({ name });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.id;
  }

  it('an agent creates, updates and deletes a contact with addresses and tags; its fellow agent sees the change', async () => {
    const tagId = await tagOf(tm.f.token, `vip-${newId().slice(0, 6)}`);
    const created = await sa('post', '/contacts').send({ first_name: 'Ada', addresses: [{ type: 'tel', target: '+1 (555) 010-2000' }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.customer_id).to.equal(tm.f.customer.id);
    expect(created.body.addresses[0].target).to.equal('+15550102000');
    const id = created.body.id;

    const upd = await sa('put', `/contacts/${id}`).send({ last_name: 'Lovelace' });
    expect(upd.body.first_name).to.equal('Ada');
    expect(upd.body.last_name).to.equal('Lovelace');

    const withAddr = await sa('post', `/contacts/${id}/addresses`).send({ type: 'email', target: 'ada@example.com', is_primary: true });
    const email = withAddr.body.addresses.find((a: { type: string }) => a.type === 'email');
    expect(email.is_primary).to.equal(true);
    const renamed = await sa('put', `/contacts/${id}/addresses/${email.id}`).send({ name: 'work' });
    expect(renamed.body.addresses.find((a: { id: string }) => a.id === email.id).name).to.equal('work');
    const dropped = await sa('delete', `/contacts/${id}/addresses/${email.id}`);
    expect(dropped.body.addresses.map((a: { id: string }) => a.id)).to.not.include(email.id);

    expect((await sa('post', `/contacts/${id}/tags`).send({ tag_id: tagId })).body.tag_ids).to.deep.equal([tagId]);
    // Contacts are shared by the customer's agents: b reads and edits what a wrote.
    expect((await sa('get', `/contacts/${id}`, tm.b.token)).body.tag_ids).to.deep.equal([tagId]);
    expect((await sa('delete', `/contacts/${id}/tags/${tagId}`, tm.b.token)).body.tag_ids).to.deep.equal([]);

    // The hyphenated spelling serves the same writes.
    const hy = await request(rig.t.app).put(`/v1.0/service-agents/contacts/${id}`).set(bearer(tm.b.token)).send({ company: 'Engines' });
    expect(hy.body.company).to.equal('Engines');

    const del = await sa('delete', `/contacts/${id}`);
    expect(del.body.tm_delete).to.be.a('string');
    expectError(await sa('get', `/contacts/${id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  it('refuses bad input in the error envelope, and another customer’s contact is 404', async () => {
    expectError(await sa('post', '/contacts').send({ addresses: [{ type: 'tel', target: 'not a number' }] }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/contacts').send({ first_name: 'x', color: 'red' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/contacts').send({ tag_ids: [newId()] }), 400, 'INVALID_ARGUMENT');
    const theirs = await sa('post', '/contacts', other.a.token).send({ first_name: 'Theirs' });
    expectError(await sa('put', `/contacts/${theirs.body.id}`).send({ first_name: 'Mine' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await sa('delete', `/contacts/${theirs.body.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await sa('post', `/contacts/${theirs.body.id}/addresses`).send({ type: 'tel', target: '+15550109999' }), 404, 'RESOURCE_NOT_FOUND');
    expect((await sa('get', `/contacts/${theirs.body.id}`, other.a.token)).body.first_name).to.equal('Theirs');
    // An accesskey has no agent.
    const ak = await request(rig.t.app).post('/v1.0/service_agents/contacts').query({ accesskey: tm.f.accesskey }).send({ first_name: 'x' });
    expectError(ak, 403, 'DIRECT_ACCESS_NOT_SUPPORTED');
  });

  it('an unresolved address is listed in the pool, claimed once, idempotently, and refused to a second contact', async () => {
    const c1 = (await sa('post', '/contacts').send({ first_name: 'One' })).body;
    const c2 = (await sa('post', '/contacts').send({ first_name: 'Two' })).body;
    const made = await sa('post', '/contact_addresses').send({ type: 'tel', target: '0015550103000', name: 'seen on a call' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body.contact_id).to.equal(EMPTY_UUID);
    expect(made.body.target).to.equal('+15550103000');
    const addr = made.body.id;

    const pool = await sa('get', '/contact_addresses').query({ unresolved: 'true', contact_id: c1.id });
    expect(pool.body.result.map((a: { id: string }) => a.id)).to.include(addr);
    expect(pool.body.result.every((a: { contact_id: string }) => a.contact_id === EMPTY_UUID)).to.equal(true);
    // An unresolved address is nobody's: a contact's read does not show it.
    expect((await sa('get', `/contacts/${c1.id}`)).body.addresses).to.deep.equal([]);

    const claimed = await sa('post', `/contact_addresses/${addr}/claim`, tm.b.token).send({ contact_id: c1.id });
    expect(claimed.status, JSON.stringify(claimed.body)).to.equal(200);
    expect(claimed.body.contact_id).to.equal(c1.id);
    expect((await sa('post', `/contact_addresses/${addr}/claim`).send({ contact_id: c1.id })).body.contact_id).to.equal(c1.id);
    expectError(await sa('post', `/contact_addresses/${addr}/claim`).send({ contact_id: c2.id }), 409, 'ALREADY_EXISTS');
    expect((await sa('get', `/contacts/${c1.id}`)).body.addresses.map((a: { id: string }) => a.id)).to.deep.equal([addr]);
    expect((await sa('get', '/contact_addresses').query({ contact_id: c1.id })).body.result.map((a: { id: string }) => a.id)).to.deep.equal([addr]);
    expect((await sa('get', '/contact_addresses').query({ unresolved: 'true' })).body.result.map((a: { id: string }) => a.id)).to.not.include(addr);
    expect((await sa('get', `/contacts/lookup`).query({ phone: '+15550103000' })).body.id).to.equal(c1.id);
  });

  it('gets, updates and deletes an address; bad input and other customers are refused', async () => {
    const c = (await sa('post', '/contacts').send({ first_name: 'Three' })).body;
    const made = await sa('post', '/contact_addresses').send({ contact_id: c.id, type: 'email', target: 'three@example.com', is_primary: true });
    expect(made.body.contact_id).to.equal(c.id);
    const id = made.body.id;
    expect((await sa('get', `/contact_addresses/${id}`)).body.target).to.equal('three@example.com');
    expect((await sa('put', `/contact_addresses/${id}`).send({ target: 'third@example.com', detail: 'moved' })).body).to.include({ target: 'third@example.com', detail: 'moved' });
    expectError(await sa('put', `/contact_addresses/${id}`).send({ target: 'nope' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/contact_addresses').send({ type: 'fax', target: '1' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/contact_addresses').send({ type: 'tel', target: '12' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', '/contact_addresses').send({ contact_id: newId(), type: 'tel', target: '+15550104000' }), 400, 'INVALID_ARGUMENT');
    expectError(await sa('post', `/contact_addresses/${id}/claim`).send({}), 400, 'INVALID_ARGUMENT');

    // Another customer's agent: 404 for the address, and its contact cannot take ours.
    expectError(await sa('get', `/contact_addresses/${id}`, other.a.token), 404, 'RESOURCE_NOT_FOUND');
    expectError(await sa('put', `/contact_addresses/${id}`, other.a.token).send({ name: 'x' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await sa('delete', `/contact_addresses/${id}`, other.a.token), 404, 'RESOURCE_NOT_FOUND');
    const loose = (await sa('post', '/contact_addresses').send({ type: 'tel', target: '+15550105000' })).body.id;
    const theirContact = (await sa('post', '/contacts', other.a.token).send({ first_name: 'T' })).body.id;
    expectError(await sa('post', `/contact_addresses/${loose}/claim`, other.a.token).send({ contact_id: theirContact }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await sa('post', `/contact_addresses/${loose}/claim`).send({ contact_id: theirContact }), 400, 'INVALID_ARGUMENT');
    expect((await sa('get', '/contact_addresses', other.a.token).query({ unresolved: 'true' })).body.result.map((a: { id: string }) => a.id)).to.not.include(loose);

    expect((await sa('delete', `/contact_addresses/${id}`)).body.id).to.equal(id);
    expectError(await sa('get', `/contact_addresses/${id}`), 404, 'RESOURCE_NOT_FOUND');
    // A deleted contact takes its addresses out of reach.
    const d = (await sa('post', '/contacts').send({ addresses: [{ type: 'tel', target: '+15550106000' }] })).body;
    await sa('delete', `/contacts/${d.id}`);
    expectError(await sa('get', `/contact_addresses/${d.addresses[0].id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  it('/contact_addresses serves the customer’s users and access keys: target filter, forced claim moves an address, other customers 404', async () => {
    const api = (method: 'get' | 'post' | 'put' | 'delete', path: string) => request(rig.t.app)[method](`/v1.0${path}`).query({ accesskey: tm.f.accesskey });
    const c1 = (await sa('post', '/contacts').send({ first_name: 'Four' })).body;
    const c2 = (await sa('post', '/contacts').send({ first_name: 'Five' })).body;
    const made = await api('post', '/contact_addresses').send({ type: 'tel', target: '+15550107000' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const id = made.body.id;
    // The agent's door sees what the access key wrote: one store.
    expect((await sa('get', `/contact_addresses/${id}`)).body.target).to.equal('+15550107000');
    const byTarget = await request(rig.t.app).get('/v1.0/contact_addresses').set(bearer(tm.f.token)).query({ target: '+15550107000' });
    expect(byTarget.body.result.map((a: { id: string }) => a.id)).to.deep.equal([id]);
    expect((await api('get', '/contact_addresses').query({ target: '+15550107001' })).body.result).to.deep.equal([]);
    // Postgres cannot store NUL: the client's error, not a 500
    expectError(await api('get', '/contact_addresses').query({ target: 'a\u0000b' }), 400, 'INVALID_ARGUMENT');

    expect((await api('post', `/contact_addresses/${id}/claim`).send({ contact_id: c1.id })).body.contact_id).to.equal(c1.id);
    expectError(await api('post', `/contact_addresses/${id}/claim`).send({ contact_id: c2.id }), 409, 'ALREADY_EXISTS');
    expectError(await api('post', `/contact_addresses/${id}/claim`).send({ contact_id: c2.id, force: 'yes' }), 400, 'INVALID_ARGUMENT');
    const moved = await api('post', `/contact_addresses/${id}/claim`).send({ contact_id: c2.id, force: true });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
    expect(moved.body.contact_id).to.equal(c2.id);
    expect((await sa('get', `/contacts/${c1.id}`)).body.addresses).to.deep.equal([]);
    expect((await sa('get', `/contacts/${c2.id}`)).body.addresses.map((a: { id: string }) => a.id)).to.deep.equal([id]);

    expectError(await api('post', '/contact_addresses').send({ type: 'tel', target: 'x' }), 400, 'INVALID_ARGUMENT');
    expectError(await request(rig.t.app).get(`/v1.0/contact_addresses/${id}`).query({ accesskey: other.f.accesskey }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).delete(`/v1.0/contact_addresses/${id}`).set(bearer(other.f.token)), 404, 'RESOURCE_NOT_FOUND');
    expectError(await request(rig.t.app).get('/v1.0/contact_addresses'), 401, 'AUTHENTICATION_REQUIRED');
    expect((await api('delete', `/contact_addresses/${id}`)).body.id).to.equal(id);
  });
});
