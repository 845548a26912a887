// The newcomer journey of issue 2 ("Done when"), end to end over HTTP on a real listening server:
// sign up, open the verification link from the outbox, verify, set the password from the mailed link,
// log in, create an access key with the token, call GET /v1.0/customer?accesskey=...
// Then the same first steps with SMTP delivery to a real SMTP receiver on loopback.
import http from 'node:http';
import fs from 'node:fs/promises';
import { expect } from 'chai';
import request from 'supertest';
import { startSmtpReceiver } from '../../support/smtp';
import { freePort } from '../../../testkit/ports';
import { startHarness, uniqueEmail, lastMail, type Harness } from './harness';

describe('newcomer journey', () => {
  let h: Harness;
  let server: http.Server;
  let base: string;
  before(async () => {
    h = await startHarness();
    const port = await freePort();
    server = http.createServer(h.app);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  });

  it('sign up -> outbox link -> HTML page -> verify -> set password -> login -> accesskey -> GET /v1.0/customer', async () => {
    const email = uniqueEmail('newcomer');
    const signup = await request(base).post('/auth/signup').send({ email, accepted_tos: true, name: 'Newcomer Ltd' });
    expect(signup.status).to.equal(200);

    // the outbox holds an .eml and a .txt; the link points at PUBLIC_URL, we follow its path here
    const files = (await fs.readdir(h.outbox)).filter((f) => f.includes(email));
    expect(files.some((f) => f.endsWith('.eml'))).to.equal(true);
    const verify = await lastMail(h.outbox, email, 'verification');
    const link = new URL(verify!.link);
    // the mailed link lands in the console; the auth group's own page takes the same token
    expect(link.pathname).to.equal('/console/verify');

    const page = await request(base).get('/auth/email-verify' + link.search);
    expect(page.status).to.equal(200);
    expect(page.text).to.match(/<form[^>]*id="verify"[^>]*action="\/auth\/email-verify"/);
    const token = /name="token" value="([0-9a-f]{64})"/.exec(page.text)![1];
    expect(token).to.equal(verify!.token);

    const verified = await request(base).post('/auth/email-verify').send({ token });
    expect(verified.status).to.equal(200);
    expect(verified.body.customer).to.include({ status: 'active', email_verified: true });

    const welcome = await lastMail(h.outbox, email, 'welcome');
    const resetLink = new URL(welcome!.link);
    expect(resetLink.pathname).to.equal('/console/password-reset');
    const form = await request(base).get('/auth/password-reset' + resetLink.search);
    expect(form.status).to.equal(200);
    const resetToken = /name="token" value="([0-9a-f]{64})"/.exec(form.text)![1];
    const password = 'my first password';
    expect((await request(base).post('/auth/password-reset').send({ token: resetToken, password })).status).to.equal(200);

    const login = await request(base).post('/auth/login').send({ username: email, password });
    expect(login.status).to.equal(200);

    const ak = await request(base).post('/v1.0/accesskeys').set('Authorization', `Bearer ${login.body.token}`).send({ name: 'my key' });
    expect(ak.status).to.be.oneOf([200, 201]);
    expect(ak.body.token).to.be.a('string');

    const me = await request(base).get('/v1.0/customer').query({ accesskey: ak.body.token });
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ id: signup.body.customer.id, email, status: 'active', email_verified: true, name: 'Newcomer Ltd' });

    // the cookie set by login works as the credential too
    const cookie = ([] as string[])
      .concat(login.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith('token='))!
      .split(';')[0];
    expect((await request(base).get('/v1.0/customer').set('Cookie', cookie)).status).to.equal(200);
  });
});

describe('SMTP delivery of the account mails', () => {
  it('the verification mail reaches a real SMTP receiver on loopback with the link in it', async () => {
    const smtp = await startSmtpReceiver();
    const received = smtp.received;
    const h: Harness = await startHarness({ smtpUrl: smtp.url });
    try {
      const email = uniqueEmail('smtp');
      const res = await request(h.app).post('/auth/signup').send({ email, accepted_tos: true });
      expect(res.status).to.equal(200);
      expect(received).to.have.length(1);
      expect(received[0].to).to.deep.equal([email]);
      const body = received[0].data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const m = /http:\/\/127\.0\.0\.1:8080\/console\/verify\?token=([0-9a-f]{64})/.exec(body);
      expect(m, 'link in the mail').to.not.equal(null);
      expect(await fs.readdir(h.outbox)).to.have.length(0);
      // and the mailed token is the live one
      expect((await request(h.app).post('/auth/email-verify').send({ token: m![1] })).status).to.equal(200);
      expect(received.length).to.equal(2); // the set-password mail followed
      expect(received[1].data.replace(/=\r?\n/g, '').replace(/=3D/g, '=')).to.match(/\/console\/password-reset\?token=[0-9a-f]{64}/);
    } finally {
      await h.close();
      await smtp.close();
    }
  });
});
