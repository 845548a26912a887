import { expect } from 'chai';
import request from 'supertest';
import { clock } from '../../../core/clock';
import { startHarness, uniqueEmail, lastMail, mailCount, expectBare, type Harness } from './harness';

async function signup(h: Harness, email = uniqueEmail('verify')) {
  const res = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
  const mail = await lastMail(h.outbox, email, 'verification');
  return { email, customerId: res.body.customer.id as string, token: mail!.token };
}

describe('/auth/email-verify and /auth/email-verify-resend', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => h.close());
  afterEach(() => clock.reset());

  it('POST verifies: 200 {customer} with email_verified true and status active; then mails the password link', async () => {
    const s = await signup(h);
    const res = await request(h.app).post('/auth/email-verify').send({ token: s.token });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body)).to.deep.equal(['customer']);
    expect(res.body.customer).to.include({ id: s.customerId, email: s.email, email_verified: true, status: 'active' });
    const w = await lastMail(h.outbox, s.email, 'welcome');
    expect(w!.link).to.match(/\/console\/password-reset\?token=[0-9a-f]{64}$/);
  });

  it('POST: bare 400 for a used token, and for missing, malformed, unknown tokens and broken JSON', async () => {
    const s = await signup(h);
    expect((await request(h.app).post('/auth/email-verify').send({ token: s.token })).status).to.equal(200);
    expectBare(await request(h.app).post('/auth/email-verify').send({ token: s.token }));
    expectBare(await request(h.app).post('/auth/email-verify').send({}));
    expectBare(await request(h.app).post('/auth/email-verify').send({ token: s.token.toUpperCase() }));
    expectBare(
      await request(h.app)
        .post('/auth/email-verify')
        .send({ token: s.token.slice(1) }),
    );
    expectBare(
      await request(h.app)
        .post('/auth/email-verify')
        .send({ token: 'f'.repeat(64) }),
    );
    expectBare(await request(h.app).post('/auth/email-verify').send({ token: 123 }));
    expectBare(await request(h.app).post('/auth/email-verify').set('Content-Type', 'application/json').send('{"token":'));
  });

  it('POST: bare 400 for an expired token (24 h), and the account stays initial', async () => {
    const s = await signup(h);
    clock.setNow(Date.now() + 24 * 3600_000 + 1000);
    expectBare(await request(h.app).post('/auth/email-verify').send({ token: s.token }));
    const row = await h.db('customers').where({ id: s.customerId }).first();
    expect(row!.status).to.equal('initial');
    expect(row!.email_verified).to.equal(false);
  });

  it('several tokens stay valid at once; a second one after verification answers 200 once', async () => {
    const s = await signup(h);
    await request(h.app).post('/auth/email-verify-resend').send({ email: s.email });
    const second = await lastMail(h.outbox, s.email, 'verification');
    expect(second!.token).to.not.equal(s.token);
    expect((await request(h.app).post('/auth/email-verify').send({ token: second!.token })).status).to.equal(200);
    const first = await request(h.app).post('/auth/email-verify').send({ token: s.token });
    expect(first.status).to.equal(200);
    expect(first.body.customer.status).to.equal('active');
    expectBare(await request(h.app).post('/auth/email-verify').send({ token: s.token }));
    expect(await mailCount(h.outbox, s.email, 'welcome')).to.equal(1);
  });

  it('GET renders an HTML page whose form submits the token to POST /auth/email-verify', async () => {
    const s = await signup(h);
    const res = await request(h.app).get(`/auth/email-verify?token=${s.token}`);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.text).to.match(/<form[^>]*action="\/auth\/email-verify"/);
    expect(res.text).to.contain(`name="token" value="${s.token}"`);
    // rendering does not consume the token
    expect((await request(h.app).post('/auth/email-verify').send({ token: s.token })).status).to.equal(200);
  });

  it('GET: bare 400 before rendering for a missing, malformed, unknown or used token', async () => {
    const s = await signup(h);
    expectBare(await request(h.app).get('/auth/email-verify'));
    expectBare(await request(h.app).get('/auth/email-verify?token=xyz'));
    expectBare(await request(h.app).get(`/auth/email-verify?token=${s.token}&token=${s.token}`));
    expectBare(await request(h.app).get(`/auth/email-verify?token=${'0'.repeat(64)}`));
    await request(h.app).post('/auth/email-verify').send({ token: s.token });
    expectBare(await request(h.app).get(`/auth/email-verify?token=${s.token}`));
  });

  it('GET with an expired link shows a form that submits to the resend endpoint', async () => {
    const s = await signup(h);
    clock.setNow(Date.now() + 25 * 3600_000);
    const res = await request(h.app).get(`/auth/email-verify?token=${s.token}`);
    expect(res.status).to.equal(200);
    expect(res.text).to.match(/<form[^>]*action="\/auth\/email-verify-resend"/);
    expect(res.text).to.contain(`value="${s.email}"`);
    expect(res.text).to.not.match(/action="\/auth\/email-verify"/);
  });

  it('resend: always 200 {} (unknown address, verified account, malformed body) and sends nothing then', async () => {
    const unknown = uniqueEmail('nobody');
    for (const body of [{ email: unknown }, {}, { email: 5 }, { email: unknown, x: 1 }]) {
      const r = await request(h.app).post('/auth/email-verify-resend').send(body);
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({});
    }
    const broken = await request(h.app).post('/auth/email-verify-resend').set('Content-Type', 'application/json').send('{{{');
    expect(broken.status).to.equal(200);
    expect(broken.body).to.deep.equal({});
    expect(await mailCount(h.outbox, unknown)).to.equal(0);

    const s = await signup(h);
    await request(h.app).post('/auth/email-verify').send({ token: s.token });
    const r = await request(h.app).post('/auth/email-verify-resend').send({ email: s.email });
    expect(r.status).to.equal(200);
    expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(1);
  });

  it('resend: at most 1 per 60 s and 5 per 24 h per account; excess answers 200 {} and sends nothing', async () => {
    const s = await signup(h);
    let t = Date.now();
    clock.setNow(t);
    const resend = () => request(h.app).post('/auth/email-verify-resend').send({ email: s.email });
    expect((await resend()).status).to.equal(200); // 1st resend
    expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(2);
    t += 30_000;
    clock.setNow(t);
    const r = await resend(); // inside 60 s
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({});
    expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(2);
    for (let i = 2; i <= 5; i++) {
      t += 61_000;
      clock.setNow(t);
      await resend();
      expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(1 + i);
    }
    t += 61_000; // 6th within 24 h: refused
    clock.setNow(t);
    await resend();
    expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(6);
    t += 24 * 3600_000; // a day later the budget is back
    clock.setNow(t);
    await resend();
    expect(await mailCount(h.outbox, s.email, 'verification')).to.equal(7);
  });
});
