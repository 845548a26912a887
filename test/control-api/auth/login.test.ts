import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { verifyToken } from '../../../core/credentials';
import { startHarness, uniqueEmail, lastMail, mailCount, expectBare, activeAccount, type Harness } from './harness';

describe('/auth/login, /auth/password-forgot, /auth/password-reset', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  afterEach(() => clock.reset());

  it('login: 200 {username, token}, a 7-day JWT also set as cookie token (HttpOnly, Secure, SameSite=Strict)', async () => {
    const a = await activeAccount(h);
    const res = await request(h.app).post('/auth/login').send({ username: a.email, password: a.password });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['token', 'username']);
    expect(res.body.username).to.equal(a.email);
    const claims = await verifyToken(h.ctx.config.jwtSecret, res.body.token);
    expect(claims.typ).to.equal('login');
    expect(claims.customer_id).to.equal(a.customerId);
    expect(claims.exp - claims.iat).to.equal(7 * 24 * 3600);
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('token='))!;
    expect(cookie).to.contain(`token=${res.body.token}`);
    expect(cookie).to.match(/; HttpOnly/i);
    expect(cookie).to.match(/; Secure/i);
    expect(cookie).to.match(/; SameSite=Strict/i);
    expect(cookie).to.match(/Max-Age=604800/);
  });

  it('login token is rejected by the shared middleware after 7 days (401 envelope)', async () => {
    const a = await activeAccount(h);
    clock.setNow(Date.now() + 7 * 24 * 3600_000 + 5000);
    const res = await request(h.app).delete('/auth/unregister').set('Authorization', `Bearer ${a.token}`);
    expect(res.status).to.equal(401);
    expect(res.body.error.reason).to.equal('INVALID_CREDENTIALS');
  });

  it('login: bare 400 for missing fields, wrong types, broken JSON, unknown user, wrong password, no password set yet', async () => {
    const a = await activeAccount(h);
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email }));
    expectBare(await request(h.app).post('/auth/login').send({ password: a.password }));
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: 12345678 }));
    expectBare(await request(h.app).post('/auth/login').set('Content-Type', 'application/json').send('{"username":'));
    expectBare(await request(h.app).post('/auth/login').send({ username: uniqueEmail(), password: a.password }));
    expectBare(
      await request(h.app)
        .post('/auth/login')
        .send({ username: a.email, password: a.password + 'x' }),
    );
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: '' }));
    const fresh = uniqueEmail('nopw');
    await request(h.app).post('/auth/signup').send({ email: fresh, accepted_tos: true });
    expectBare(await request(h.app).post('/auth/login').send({ username: fresh, password: '' }));
    expectBare(await request(h.app).post('/auth/login').send({ username: fresh, password: 'anything-at-all' }));
  });

  it('login: password first, then status: expired and deleted get 403 envelopes, initial and frozen log in', async () => {
    const a = await activeAccount(h);
    await h.db('customers').where({ id: a.customerId }).update({ status: 'expired' });
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: 'wrong-password' }));
    const exp = await request(h.app).post('/auth/login').send({ username: a.email, password: a.password });
    expect(exp.status).to.equal(403);
    expect(exp.body.error).to.include({ status: 'PERMISSION_DENIED', reason: 'ACCOUNT_EXPIRED' });
    expect(exp.body.error.details[0].recovery_endpoint).to.equal('POST /auth/email-verify-resend');
    expect(exp.body.error.request_id).to.equal(exp.headers['x-request-id']);

    await h.db('customers').where({ id: a.customerId }).update({ status: 'deleted' });
    const del = await request(h.app).post('/auth/login').send({ username: a.email, password: a.password });
    expect(del.status).to.equal(403);
    expect(del.body.error.reason).to.equal('ACCOUNT_DELETED');

    for (const status of ['initial', 'frozen', 'active'] as const) {
      await h.db('customers').where({ id: a.customerId }).update({ status });
      const ok = await request(h.app).post('/auth/login').send({ username: a.email, password: a.password });
      expect(ok.status, status).to.equal(200);
    }
  });

  it('login fails closed (bare 400) when the status lookup fails', async () => {
    const a = await activeAccount(h);
    const original = h.ctx.statusLookup;
    h.ctx.statusLookup = async () => {
      throw new Error('database unreachable');
    };
    try {
      expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: a.password }));
    } finally {
      h.ctx.statusLookup = original;
    }
  });

  it('usernames are case-insensitive emails', async () => {
    const a = await activeAccount(h);
    const res = await request(h.app).post('/auth/login').send({ username: a.email.toUpperCase(), password: a.password });
    expect(res.status).to.equal(200);
  });

  it('password-forgot: 200 {} always; mails a 1-hour reset link only for a live agent', async () => {
    const a = await activeAccount(h);
    const nobody = uniqueEmail('ghost');
    const r1 = await request(h.app).post('/auth/password-forgot').send({ username: nobody });
    expect(r1.status).to.equal(200);
    expect(r1.body).to.deep.equal({});
    expect(await mailCount(h.outbox, nobody)).to.equal(0);
    const r2 = await request(h.app).post('/auth/password-forgot').send({ username: a.email });
    expect(r2.status).to.equal(200);
    expect(r2.body).to.deep.equal({});
    const m = await lastMail(h.outbox, a.email, 'password-reset');
    expect(m!.link).to.equal(`http://127.0.0.1:8080/console/password-reset?token=${m!.token}`);
    const row = await h.db('password_reset_tokens').whereNull('tm_used').where({ customer_id: a.customerId }).first();
    expect(row!.tm_expire.getTime() - row!.tm_create.getTime()).to.equal(3600_000);
  });

  it('password-forgot: bare 400 when username is missing or the JSON is broken', async () => {
    expectBare(await request(h.app).post('/auth/password-forgot').send({}));
    expectBare(await request(h.app).post('/auth/password-forgot').send({ username: 3 }));
    expectBare(await request(h.app).post('/auth/password-forgot').set('Content-Type', 'application/json').send('nope'));
  });

  it('password-reset: GET renders the form; POST sets the password, the old one stops working, links are single use', async () => {
    const a = await activeAccount(h);
    await request(h.app).post('/auth/password-forgot').send({ username: a.email });
    const m = await lastMail(h.outbox, a.email, 'password-reset');
    const page = await request(h.app).get(`/auth/password-reset?token=${m!.token}`);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.text).to.match(/<form[^>]*action="\/auth\/password-reset"/);
    expect(page.text).to.contain(`name="token" value="${m!.token}"`);
    expect(page.text).to.contain('type="password"');

    const res = await request(h.app).post('/auth/password-reset').send({ token: m!.token, password: 'brand-new-secret' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({});
    expectBare(await request(h.app).post('/auth/login').send({ username: a.email, password: a.password }));
    expect((await request(h.app).post('/auth/login').send({ username: a.email, password: 'brand-new-secret' })).status).to.equal(200);
    expectBare(await request(h.app).post('/auth/password-reset').send({ token: m!.token, password: 'another-secret' }));
    expectBare(await request(h.app).get(`/auth/password-reset?token=${m!.token}`));
  });

  it('password-reset: bare 400 for missing/malformed/unknown/expired token, short password, broken JSON', async () => {
    const a = await activeAccount(h);
    await request(h.app).post('/auth/password-forgot').send({ username: a.email });
    const m = await lastMail(h.outbox, a.email, 'password-reset');
    expectBare(await request(h.app).get('/auth/password-reset'));
    expectBare(await request(h.app).get('/auth/password-reset?token=abc'));
    expectBare(await request(h.app).get(`/auth/password-reset?token=${'e'.repeat(64)}`));
    expectBare(await request(h.app).post('/auth/password-reset').send({ token: m!.token }));
    expectBare(await request(h.app).post('/auth/password-reset').send({ token: m!.token, password: 'short' }));
    expectBare(await request(h.app).post('/auth/password-reset').send({ password: 'long-enough-pw' }));
    expectBare(
      await request(h.app)
        .post('/auth/password-reset')
        .send({ token: 'e'.repeat(64), password: 'long-enough-pw' }),
    );
    expectBare(await request(h.app).post('/auth/password-reset').set('Content-Type', 'application/json').send('{"token"'));
    clock.setNow(Date.now() + 3600_000 + 1000);
    expectBare(await request(h.app).get(`/auth/password-reset?token=${m!.token}`));
    expectBare(await request(h.app).post('/auth/password-reset').send({ token: m!.token, password: 'long-enough-pw' }));
    clock.reset();
    expect((await request(h.app).post('/auth/login').send({ username: a.email, password: a.password })).status).to.equal(200);
  });
});
