// The account mails land in the console: sign up in the page, the verification mail reaches a real
// SMTP receiver on loopback, its link (/console/verify?token=…) opens the console, which verifies;
// the "set your password" mail that follows links to /console/password-reset?token=…, where the
// password is set and the console signs in. Links are taken from the mails as received.
import { expect } from 'chai';
import request from 'supertest';
import { chromiumAvailable, fill } from '../../testkit/browser';
import { mailText, startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from '../support/smtp';
import { until } from '../../testkit/media-app/harness';
import { freshPage, js, shot, signUpInPage, startConsole, textOf, type ConsoleRig } from './support';

/** The one link of a received mail, which must be under `base`. */
function linkOf(mail: ReceivedMail, base: string, path: string): string {
  const body = mailText(mail);
  const m = new RegExp(`${base.replace(/[.]/g, '\\.')}${path}\\?token=[0-9a-f]{64}`).exec(body);
  expect(m, `a ${path} link in:\n${body}`).to.not.equal(null);
  return m![0];
}

describe('console: sign-up, the verification mail and the password mail land in the console (Chromium, SMTP)', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let smtp: SmtpReceiver;

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    smtp = await startSmtpReceiver();
    rig = await startConsole({ env: { SMTP_URL: smtp.url } });
  });
  after(async () => {
    await rig?.close();
    await smtp?.close();
  });

  it('sign up → the mailed verification link verifies in the console → the mailed password link sets the password and signs in', async () => {
    const email = `mailed-${Date.now()}@example.test`;
    const mailsTo = () => smtp.received.filter((m) => m.to.includes(email));
    const page = await signUpInPage(rig, email, 'Mailed Ltd');

    // the verification mail, as the SMTP receiver got it
    const verification = await until(async () => mailsTo()[0] ?? null, 5000, 'verification mail');
    const verifyLink = linkOf(verification, rig.base, '/console/verify');
    const landing = await request(rig.t.app).get(new URL(verifyLink).pathname + new URL(verifyLink).search);
    expect(landing.status).to.equal(200);
    expect(landing.headers['cache-control']).to.equal('no-store');
    expect(landing.headers['referrer-policy']).to.equal('no-referrer');
    await page.goto(verifyLink);
    await page.waitForSelector('section[aria-label="Verify your email"] button.primary');
    await shot(rig, page, 'verify-landing');
    await page.click('section[aria-label="Verify your email"] button.primary');
    await page.waitForFunction(`document.body.innerText.includes('Your email is verified')`);
    expect(await rig.t.ctx.repos.customers.getByEmail(email)).to.include({ status: 'active', email_verified: true });

    // the password mail follows; its link lands in the console too
    const welcome = await until(async () => mailsTo()[1] ?? null, 5000, 'password mail');
    const passwordLink = linkOf(welcome, rig.base, '/console/password-reset');
    await page.goto(passwordLink);
    await page.waitForSelector('form[aria-label="Set your password"]');
    await page.type('input[name=username]', email);
    await page.type('input[name=password]', 'mailed-pass-123');
    await page.type('input[name=password_again]', 'mailed-pass-124');
    await page.click('form[aria-label="Set your password"] button[type=submit]');
    await page.waitForFunction(`document.body.innerText.includes('The two passwords differ')`);
    await fill(page, 'input[name=password_again]', 'mailed-pass-123');
    await shot(rig, page, 'set-password');
    await page.click('form[aria-label="Set your password"] button[type=submit]');
    // signed in: the console opens on the customer, and the token is gone from the address bar
    await page.waitForSelector('nav a[aria-current=page]', { timeout: 10_000 });
    expect(await textOf(page)).to.include('Mailed Ltd');
    expect(await js<string>(page, 'location.href')).to.equal(`${rig.base}/console/#/calls`);
    const login = await request(rig.t.app).post('/auth/login').send({ username: email, password: 'mailed-pass-123' });
    expect(login.status).to.equal(200);

    // the same password link again: used, the page says so
    const again = await freshPage(rig);
    await again.goto(passwordLink);
    await again.waitForSelector('form[aria-label="Set your password"]');
    await again.type('input[name=username]', email);
    await again.type('input[name=password]', 'another-pass-123');
    await again.type('input[name=password_again]', 'another-pass-123');
    await again.click('form[aria-label="Set your password"] button[type=submit]');
    await again.waitForFunction(`document.body.innerText.includes('expired or was already used')`);
    await again.close();
    await page.close();
    expect(rig.browser.errors.filter((e) => !/Failed to load resource/.test(e))).to.deep.equal([]);
  });
});
