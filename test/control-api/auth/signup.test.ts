import { expect } from 'chai';
import request from 'supertest';
import { startHarness, uniqueEmail, lastMail, mailCount, expectBare, type Harness } from './harness';

describe('POST /auth/signup', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());

  it('creates customer (initial), admin agent without password, accesskey, empty outbound config, and mails a link', async () => {
    const email = uniqueEmail('signup');
    const res = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true, name: 'Acme', webhook_method: 'POST', webhook_uri: 'https://hooks.example.test/x' });
    expect(res.status).to.equal(200);
    const { customer, accesskey } = res.body;
    expect(customer).to.include({ email, name: 'Acme', status: 'initial', email_verified: false, webhook_method: 'POST' });
    expect(customer.id).to.match(/^[0-9a-f-]{36}$/);
    expect(customer).to.not.have.property('webhook_secret');
    expect(accesskey.token).to.be.a('string').with.length.greaterThan(20);
    expect(accesskey.customer_id).to.equal(customer.id);

    const agents = await h.db('agents').where({ customer_id: customer.id });
    expect(agents).to.have.length(1);
    expect(agents[0].username).to.equal(email);
    expect(agents[0].password_hash).to.equal('');
    expect(Number(agents[0].permission) & 32).to.equal(32);
    const oc = await h.db('outbound_configs').where({ customer_id: customer.id });
    expect(oc).to.have.length(1);
    expect(oc[0].destination_whitelist).to.deep.equal([]);
    expect(await h.db('accesskeys').where({ customer_id: customer.id })).to.have.length(1);

    const mail = await lastMail(h.outbox, email, 'verification');
    expect(mail!.link).to.match(/^http:\/\/127\.0\.0\.1:8080\/console\/verify\?token=[0-9a-f]{64}$/);
    const tok = await h.db('email_verification_tokens').where({ customer_id: customer.id });
    expect(tok).to.have.length(1);
    expect(tok[0].token_hash).to.not.equal(mail!.token); // only the hash is stored
    const ttl = tok[0].tm_expire.getTime() - tok[0].tm_create.getTime();
    expect(ttl).to.equal(24 * 3600_000);
  });

  it('the signup accesskey works as an accesskey right away', async () => {
    const res = await request(h.app).post('/auth/signup').send({ email: uniqueEmail(), accepted_tos: true });
    // frozen-check path of the shared middleware on /auth/unregister DELETE: not frozen -> bare 400 after auth succeeded
    const r = await request(h.app).delete(`/auth/unregister?accesskey=${encodeURIComponent(res.body.accesskey.token)}`);
    expectBare(r, 400);
  });

  it('answers 200 {} for a duplicate email (any case) and sends nothing more', async () => {
    const email = uniqueEmail('dup');
    expect((await request(h.app).post('/auth/signup').send({ email, accepted_tos: true })).status).to.equal(200);
    const again = await request(h.app).post('/auth/signup').send({ email: email.toUpperCase(), accepted_tos: true });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({});
    expect(await mailCount(h.outbox, email)).to.equal(1);
    expect(await h.db('customers').whereRaw('lower(email) = ?', [email])).to.have.length(1);
  });

  it('answers 200 {} for an invalid email and creates nothing', async () => {
    for (const email of ['not-an-email', 'a@b', '@example.test', 'x y@example.test', '']) {
      const res = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
      expect(res.status, email).to.equal(200);
      expect(res.body, email).to.deep.equal({});
    }
    expect(await h.db('customers').where({ email: 'not-an-email' })).to.have.length(0);
  });

  it('bare 400 when email is missing, accepted_tos missing or false, or the JSON is broken', async () => {
    expectBare(await request(h.app).post('/auth/signup').send({ accepted_tos: true }));
    expectBare(await request(h.app).post('/auth/signup').send({ email: uniqueEmail() }));
    expectBare(await request(h.app).post('/auth/signup').send({ email: uniqueEmail(), accepted_tos: false }));
    expectBare(await request(h.app).post('/auth/signup').set('Content-Type', 'application/json').send('{"email": "a@b.c", accepted_tos: true'));
    expectBare(await request(h.app).post('/auth/signup').set('Content-Type', 'application/json').send('[]'));
    expectBare(await request(h.app).post('/auth/signup'));
  });

  it('bare 400 for wrong types, unknown fields, oversized values and bodies; nothing half-written', async () => {
    const email = uniqueEmail('bad');
    expectBare(await request(h.app).post('/auth/signup').send({ email, accepted_tos: 'true' }));
    expectBare(await request(h.app).post('/auth/signup').send({ email: 42, accepted_tos: true }));
    expectBare(await request(h.app).post('/auth/signup').send({ email, accepted_tos: true, name: 7 }));
    expectBare(await request(h.app).post('/auth/signup').send({ email, accepted_tos: true, password: 'x' }));
    expectBare(await request(h.app).post('/auth/signup').send({ email, accepted_tos: true, webhook_method: 'PATCH' }));
    expectBare(await request(h.app).post('/auth/signup').send({ email, accepted_tos: true, webhook_uri: 'ftp://x' }));
    expectBare(
      await request(h.app)
        .post('/auth/signup')
        .send({ email, accepted_tos: true, name: 'n'.repeat(256) }),
    );
    expectBare(
      await request(h.app)
        .post('/auth/signup')
        .send({ email, accepted_tos: true, detail: 'd'.repeat(20_000) }),
    );
    expect(await h.db('customers').where({ email })).to.have.length(0);
    expect(await mailCount(h.outbox, email)).to.equal(0);
  });

  it('accepts a JSON body sent without a JSON content type (curl -d)', async () => {
    const email = uniqueEmail('curl');
    const res = await request(h.app)
      .post('/auth/signup')
      .type('form')
      .send(JSON.stringify({ email, accepted_tos: true }));
    expect(res.status).to.equal(200);
    expect(res.body.customer.email).to.equal(email);
  });

  it('/v1.0/auth/signup is not a route (404 ROUTE_NOT_FOUND envelope)', async () => {
    const res = await request(h.app).post('/v1.0/auth/signup').send({ email: uniqueEmail(), accepted_tos: true });
    expect(res.status).to.equal(404);
    expect(res.body.error.reason).to.equal('ROUTE_NOT_FOUND');
  });
});
