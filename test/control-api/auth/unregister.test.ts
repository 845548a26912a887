import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { startHarness, uniqueEmail, lastMail, expectBare, activeAccount, type Harness } from './harness';

describe('/auth/unregister', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  afterEach(() => clock.reset());

  const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

  it('POST with the password freezes the account and schedules deletion in 30 days; DELETE recovers it', async () => {
    const a = await activeAccount(h);
    const res = await request(h.app).post('/auth/unregister').set(bearer(a.token)).send({ password: a.password });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: a.customerId, status: 'frozen' });
    expect(res.body.tm_deletion_scheduled).to.not.equal('9999-01-01 00:00:00.000000');
    const mail = await lastMail(h.outbox, a.email, 'unregister');
    expect(mail).to.not.equal(null);

    // the freeze ended every session (docs/security.md "Sessions"): the old token is refused, a new login works
    const old = await request(h.app).post('/auth/delegate').set(bearer(a.token)).send({ customer_id: a.customerId, reason: 'support ticket 1234' });
    expect([old.status, old.body.error.reason]).to.deep.equal([401, 'INVALID_CREDENTIALS']);
    const login = await request(h.app).post('/auth/login').send({ username: a.email, password: a.password });
    expect(login.status).to.equal(200);
    const token: string = login.body.token;

    // the frozen account may still call unregister (DELETE) while the shared gate blocks delegate
    const del = await request(h.app).post('/auth/delegate').set(bearer(token)).send({ customer_id: a.customerId, reason: 'support ticket 1234' });
    expect(del.status).to.equal(403);
    expect(del.body.error.reason).to.equal('ACCOUNT_FROZEN');
    expect(del.body.error.details[0].recovery_endpoint).to.equal('DELETE /auth/unregister');
    expect(del.body.error.details[0].deletion_effective_at).to.be.a('string');

    const again = await request(h.app).post('/auth/unregister').set(bearer(token)).send({ password: a.password });
    expect(again.status).to.equal(200); // idempotent
    expect(again.body.status).to.equal('frozen');

    const rec = await request(h.app).delete('/auth/unregister').set(bearer(token));
    expect(rec.status).to.equal(200);
    expect(rec.body).to.include({ id: a.customerId, status: 'active', tm_deletion_scheduled: '9999-01-01 00:00:00.000000' });
    expectBare(await request(h.app).delete('/auth/unregister').set(bearer(token))); // not frozen any more
  });

  it('POST with an accesskey needs confirmation_phrase "DELETE"; a password cannot be checked for a key', async () => {
    const a = await activeAccount(h);
    const q = `?accesskey=${encodeURIComponent(a.accesskey)}`;
    expectBare(
      await request(h.app)
        .post('/auth/unregister' + q)
        .send({ confirmation_phrase: 'delete' }),
    );
    expectBare(
      await request(h.app)
        .post('/auth/unregister' + q)
        .send({ confirmation_phrase: 'DELETE ME' }),
    );
    expectBare(
      await request(h.app)
        .post('/auth/unregister' + q)
        .send({ password: a.password }),
    );
    const ok = await request(h.app)
      .post('/auth/unregister' + q)
      .send({ confirmation_phrase: 'DELETE' });
    expect(ok.status).to.equal(200);
    expect(ok.body.status).to.equal('frozen');
  });

  it('bare 400: wrong password, invalid phrase, both or neither given, wrong types, broken JSON; account unchanged', async () => {
    const a = await activeAccount(h);
    const post = (body: unknown) =>
      request(h.app)
        .post('/auth/unregister')
        .set(bearer(a.token))
        .send(body as object);
    expectBare(await post({ password: 'not-the-password' }));
    expectBare(await post({ confirmation_phrase: 'REMOVE' }));
    expectBare(await post({ password: a.password, confirmation_phrase: 'DELETE' }));
    expectBare(await post({}));
    expectBare(await post({ password: a.password, immediate: 'yes' }));
    expectBare(await post({ password: a.password, extra: 1 }));
    expectBare(await request(h.app).post('/auth/unregister').set(bearer(a.token)).set('Content-Type', 'application/json').send('{"password":'));
    expect((await h.db('customers').where({ id: a.customerId }).first())!.status).to.equal('active');
  });

  it('the shared middleware answers with the envelope: no credentials, bad token, expired token', async () => {
    const none = await request(h.app).post('/auth/unregister').send({ confirmation_phrase: 'DELETE' });
    expect(none.status).to.equal(401);
    expect(none.body.error.reason).to.equal('AUTHENTICATION_REQUIRED');
    const bad = await request(h.app).post('/auth/unregister').set(bearer('abc.def.ghi')).send({ confirmation_phrase: 'DELETE' });
    expect(bad.status).to.equal(401);
    expect(bad.body.error.reason).to.equal('INVALID_CREDENTIALS');
    const wrongParam = await request(h.app).delete('/auth/unregister?token=ak_not_a_jwt');
    expect(wrongParam.status).to.equal(401);
    expect(wrongParam.body.error.request_id).to.match(/^req_/);
  });

  it('POST immediate true deletes at once: cascade, PII anonymised, credentials dead, email free again', async () => {
    const a = await activeAccount(h);
    const res = await request(h.app).post('/auth/unregister').set(bearer(a.token)).send({ password: a.password, immediate: true });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: a.customerId, status: 'deleted' });
    expect(res.body.email).to.not.equal(a.email);
    expect(res.body.tm_delete).to.not.equal('9999-01-01 00:00:00.000000');
    for (const table of ['agents', 'accesskeys', 'outbound_configs', 'email_verification_tokens', 'password_reset_tokens']) {
      expect(await h.db(table).where({ customer_id: a.customerId }), table).to.have.length(0);
    }
    const row = await h.db('customers').where({ id: a.customerId }).first();
    expect(row).to.include({ status: 'deleted', phone_number: '', webhook_uri: '' });
    expect(row!.email).to.match(/@removed\.invalid$/);

    const withKey = await request(h.app).delete(`/auth/unregister?accesskey=${encodeURIComponent(a.accesskey)}`);
    expect(withKey.status).to.equal(401);
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: a.password }));
    const re = await request(h.app).post('/auth/signup').send({ email: a.email, accepted_tos: true });
    expect(re.status).to.equal(200);
    expect(re.body.customer.id).to.not.equal(a.customerId);
  });

  it('a non-admin agent of the customer gets a bare 403', async () => {
    const a = await activeAccount(h);
    const username = uniqueEmail('plain');
    const agent = await h.ctx.repos.agents.create({ customer_id: a.customerId, username, password: 'agent-password', permission: 16 });
    const login = await request(h.app).post('/auth/login').send({ username, password: 'agent-password' });
    expect(login.status).to.equal(200);
    expectBare(await request(h.app).post('/auth/unregister').set(bearer(login.body.token)).send({ password: 'agent-password' }), 403);
    expect(agent.customer_id).to.equal(a.customerId);
  });
});
