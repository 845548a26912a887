import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { clock } from '../../core/clock';
import { hashAccesskeyToken } from '../../core/credentials';
import { EMPTY_UUID } from '../../core/ids';
import { TM_SENTINEL } from '../../core/time';

const LEGACY = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

describe('control-api: accesskeys, customer, me, outbound configs', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s), { each: true });
  const q = () => ({ accesskey: f.accesskey });

  describe('/accesskeys', () => {
    it('create returns the secret once; it is stored only as sha256; the new key works at once', async () => {
      const res = await request(t.app).post('/v1.0/accesskeys').query(q()).send({ name: 'ci', detail: 'for CI', expire: 3600 });
      expect(res.status).to.equal(200);
      expect(res.body.token).to.match(/^ak_[A-Za-z0-9_-]{32}$/);
      expect(res.body.token_prefix).to.equal(res.body.token.slice(0, 11));
      expect(res.body).to.include({ name: 'ci', detail: 'for CI', customer_id: f.customer.id, tm_update: TM_SENTINEL, tm_delete: TM_SENTINEL });
      expect(res.body.tm_create).to.match(LEGACY);
      const expire = Date.parse(res.body.tm_expire.replace(' ', 'T') + 'Z') - Date.parse(res.body.tm_create.replace(' ', 'T') + 'Z');
      expect(expire).to.equal(3600_000);
      const row = await t.ctx.db('accesskeys').where({ id: res.body.id }).first();
      expect(row!.token_hash).to.equal(hashAccesskeyToken(res.body.token));
      expect(JSON.stringify(row)).to.not.include(res.body.token);
      const get = await request(t.app).get(`/v1.0/accesskeys/${res.body.id}`).query({ accesskey: res.body.token });
      expect(get.status).to.equal(200);
      expect(get.body).to.not.have.property('token');
      const list = await request(t.app).get('/v1.0/accesskeys').query(q());
      expect(list.body.result).to.have.length(2);
      for (const k of list.body.result) expect(k).to.not.have.property('token');
    });

    it('default expiry is one year; expire must be a positive integer of seconds', async () => {
      const res = await request(t.app).post('/v1.0/accesskeys').query(q()).send({});
      const days = (Date.parse(res.body.tm_expire.replace(' ', 'T') + 'Z') - Date.now()) / 86400_000;
      expect(days).to.be.within(364.9, 365.1);
      for (const expire of [0, -5, 1.5, '60', null]) {
        const bad = await request(t.app).post('/v1.0/accesskeys').query(q()).send({ expire });
        expect(bad.status, String(expire)).to.equal(400);
        expect(bad.body.error.details[0].field).to.equal('expire');
      }
    });

    it('expiry is enforced at use', async () => {
      clock.setNow(Date.now());
      const res = await request(t.app).post('/v1.0/accesskeys').query(q()).send({ expire: 10 });
      expect((await request(t.app).get('/v1.0/customer').query({ accesskey: res.body.token })).status).to.equal(200);
      clock.advance(10_001);
      const late = await request(t.app).get('/v1.0/customer').query({ accesskey: res.body.token });
      expect(late.status).to.equal(401);
      expect(late.body.error.reason).to.equal('INVALID_CREDENTIALS');
    });

    it('update name/detail; delete soft-deletes, returns the key, and the secret stops working', async () => {
      const { body: k } = await request(t.app).post('/v1.0/accesskeys').query(q()).send({ name: 'a' });
      const put = await request(t.app).put(`/v1.0/accesskeys/${k.id}`).query(q()).send({ name: 'b', detail: 'd' });
      expect(put.status).to.equal(200);
      expect(put.body).to.include({ name: 'b', detail: 'd' });
      expect(put.body.tm_update).to.match(LEGACY).and.not.equal(TM_SENTINEL);
      const del = await request(t.app).delete(`/v1.0/accesskeys/${k.id}`).query(q());
      expect(del.status).to.equal(200);
      expect(del.body.tm_delete).to.not.equal(TM_SENTINEL);
      expect((await request(t.app).get('/v1.0/customer').query({ accesskey: k.token })).status).to.equal(401);
      expect((await request(t.app).get(`/v1.0/accesskeys/${k.id}`).query(q())).status).to.equal(404);
      expect((await request(t.app).delete(`/v1.0/accesskeys/${k.id}`).query(q())).status).to.equal(404);
      expect((await t.ctx.db('accesskeys').where({ id: k.id }).first())!.tm_delete).to.be.instanceOf(Date);
    });

    it('unknown id → 404 RESOURCE_NOT_FOUND', async () => {
      const res = await request(t.app).get('/v1.0/accesskeys/6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00').query(q());
      expect(res.status).to.equal(404);
      expect(res.body.error.reason).to.equal('RESOURCE_NOT_FOUND');
    });
  });

  describe('/customer and /me', () => {
    it('GET shows the spec fields with legacy timestamps', async () => {
      const res = await request(t.app).get('/v1.0/customer').query(q());
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: f.customer.id, email: f.customer.email, email_verified: true, status: 'active', identity_verification_status: 'none', webhook_method: '' });
      expect(res.body.tm_create).to.match(LEGACY);
      expect(res.body.tm_delete).to.equal(TM_SENTINEL);
      expect(res.body.tm_deletion_scheduled).to.equal(TM_SENTINEL);
      // the webhook secret is masked on reads (whole only from POST /customer/webhook_secret, test/control-api/webhook-secret.test.ts)
      const secret = f.customer.webhook_secret;
      expect(secret).to.have.length.above(20);
      expect(res.body).to.include({ webhook_secret: `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}`, webhook_secret_set: true });
    });

    it('PUT updates webhook and profile fields, validates them, leaves absent ones alone', async () => {
      const ok = await request(t.app).put('/v1.0/customer').query(q()).send({ webhook_method: 'POST', webhook_uri: 'https://example.test/hook', name: 'Acme' });
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ webhook_method: 'POST', webhook_uri: 'https://example.test/hook', name: 'Acme', email: f.customer.email });
      for (const body of [{ webhook_uri: 'ftp://x' }, { webhook_uri: 'not a url' }, { webhook_method: 'post' }, { phone_number: '555-1234' }, { email: 'x@y.z' }, { status: 'active' }]) {
        const bad = await request(t.app).put('/v1.0/customer').query(q()).send(body);
        expect(bad.status, JSON.stringify(body)).to.equal(400);
      }
      // A client that sends the whole record back may include the unchanged email; changing it is refused.
      const same = await request(t.app).put('/v1.0/customer').query(q()).send({ email: f.customer.email.toUpperCase(), detail: 'd' });
      expect(same.status, JSON.stringify(same.body)).to.equal(200);
      expect(same.body).to.include({ email: f.customer.email, detail: 'd' });
      const changed = await request(t.app).put('/v1.0/customer').query(q()).send({ email: 'other@example.test' });
      expect(changed.status).to.equal(400);
      expect(changed.body.error).to.deep.include({ message: 'email cannot be changed here: use the auth group', details: [{ field: 'email' }] });
      const again = await request(t.app).get('/v1.0/customer').query(q());
      expect(again.body.name).to.equal('Acme');
      expect(again.body.email).to.equal(f.customer.email);
    });

    it('GET /me returns the logged-in agent without secrets', async () => {
      const res = await request(t.app).get('/v1.0/me').set('Authorization', `Bearer ${f.token}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: f.admin.id, customer_id: f.customer.id, username: f.admin.username, permission: 32 });
      expect(res.body).to.not.have.property('password_hash');
      expect(res.body.tag_ids).to.deep.equal([]);
    });
  });

  describe('/outbound_configs', () => {
    it('lists the signup config; create/get/put/delete with RFC 3339 or null timestamps', async () => {
      const list = await request(t.app).get('/v1.0/outbound_configs').query(q());
      expect(list.body.result).to.have.length(1);
      expect(list.body.result[0]).to.include({ id: f.outboundConfig.id, codecs: '', default_outgoing_source_number_id: EMPTY_UUID, tm_update: null, tm_delete: null });
      expect(list.body.result[0].destination_whitelist).to.deep.equal([]);
      expect(list.body.result[0].tm_create).to.match(RFC3339);
      const created = await request(t.app)
        .post('/v1.0/outbound_configs')
        .query(q())
        .send({ name: 'eu', destination_whitelist: ['de', 'fr', 'de'], codecs: 'PCMU,PCMA' });
      expect(created.status).to.equal(200);
      expect(created.body.destination_whitelist).to.deep.equal(['de', 'fr']);
      const id = created.body.id;
      const put = await request(t.app).put(`/v1.0/outbound_configs/${id}`).query(q()).send({ destination_whitelist: null, codecs: '', detail: 'x' });
      expect(put.body).to.include({ codecs: '', detail: 'x', name: 'eu' });
      expect(put.body.destination_whitelist).to.deep.equal(['de', 'fr']);
      expect(put.body.tm_update).to.match(RFC3339);
      const cleared = await request(t.app).put(`/v1.0/outbound_configs/${id}`).query(q()).send({ destination_whitelist: [] });
      expect(cleared.body.destination_whitelist).to.deep.equal([]);
      const del = await request(t.app).delete(`/v1.0/outbound_configs/${id}`).query(q());
      expect(del.status).to.equal(200);
      expect(del.body.tm_delete).to.match(RFC3339);
      expect((await request(t.app).get(`/v1.0/outbound_configs/${id}`).query(q())).status).to.equal(404);
    });

    it("refuses upper-case, unknown and malformed country codes, bad codecs, and a source number that is not the customer's", async () => {
      for (const body of [
        { destination_whitelist: ['US'] },
        { destination_whitelist: ['xx'] },
        { destination_whitelist: ['usa'] },
        { destination_whitelist: 'us' },
        { codecs: 'PCMU,,PCMA' },
        { codecs: 'PCMU; rm -rf' },
        { default_outgoing_source_number_id: 'nope' },
        { default_outgoing_source_number_id: '6f1c2f0e-4b7a-4d3e-9a51-2c0b8e1d7f00' },
      ]) {
        const res = await request(t.app).post('/v1.0/outbound_configs').query(q()).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.status).to.equal('INVALID_ARGUMENT');
      }
      const n = await t.ctx.db('outbound_configs').count({ n: '*' });
      expect(Number(n[0].n)).to.equal(1);
      const ok = await request(t.app).post('/v1.0/outbound_configs').query(q()).send({ default_outgoing_source_number_id: EMPTY_UUID });
      expect(ok.status).to.equal(200);
    });
  });
});
