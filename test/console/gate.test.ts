// Signing in, the account status gate (a frozen account sees the banner and nothing else), and the
// operator view (present for a ProjectSuperAdmin, absent for a customer admin), in Chromium.
import { expect } from 'chai';
import request from 'supertest';
import { createFixture } from '../../testkit/api';
import { PERMISSION_BY_NAME } from '../../core/permissions';
import { chromiumAvailable, fill } from '../../testkit/browser';
import { PHONE, js, shot, signIn, signUpInPage, startConsole, textOf, type ConsoleRig } from './support';
import { lastMail } from '../control-api/auth/harness';
import { until } from '../../testkit/media-app/harness';

describe('console: sign in, account gate, operator view (Chromium)', function () {
  this.timeout(60_000);
  let rig: ConsoleRig;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole();
  });
  after(async () => rig?.close());

  it('serves the console with its CSP and cache headers', async () => {
    const res = await request(rig.t.app).get('/console/');
    expect(res.status).to.equal(200);
    expect(res.headers['content-security-policy'])
      .to.match(/default-src 'self'/)
      .and.match(/frame-ancestors 'none'/)
      .and.match(/script-src 'self'(;|$)/);
    expect(res.headers['cache-control']).to.equal('no-cache');
    const js = await request(rig.t.app).get('/console/main.js');
    expect(js.status).to.equal(200);
    expect(js.headers['cache-control']).to.match(/max-age=300/);
    expect((await request(rig.t.app).get('/console/nope.js')).status).to.equal(404);
  });

  it('a wrong password is refused in the page; the right one signs in (login cookie) and shows the calls page', async () => {
    const f = await createFixture(rig.t.ctx);
    const page = await signIn(rig, f.admin.username, 'wrong-password');
    await page.waitForSelector('.error[role=alert]');
    expect(await textOf(page)).to.include('Wrong username or password');
    await shot(rig, page, 'sign-in');
    await fill(page, 'input[name=password]', f.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav a[aria-current=page]');
    expect(await textOf(page)).to.include('Live calls');
    // The session lives in the HttpOnly cookie, not in the page.
    const cookies = await page.cookies();
    expect(cookies.find((c) => c.name === 'token')?.httpOnly).to.equal(true);
    expect(await js<string>(page, 'document.cookie')).to.not.include('token=');
    await page.waitForSelector('.socket-open');
    // no Operator entry for a customer admin, and the route itself shows nothing
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.textContent))).to.not.include('Operator');
    await page.goto(`${rig.base}/console/#/operator`);
    await page.waitForSelector('main .empty');
    expect(await textOf(page)).to.not.include('Customers');
    // sign out: the cookie is gone, the sign-in form is back and stays back after a reload
    await page.click('.top button.link');
    await page.waitForSelector('form[aria-label="Sign in"]');
    await page.reload();
    await page.waitForSelector('form[aria-label="Sign in"]');
    expect(rig.browser.errors.filter((e) => !/Failed to load resource/.test(e))).to.deep.equal([]);
    await page.close();
  });

  it('a frozen account sees the banner with its recovery action and nothing else; recovering opens the console', async () => {
    const f = await createFixture(rig.t.ctx, { status: 'frozen' });
    await rig.t.ctx.db('customers').where({ id: f.customer.id }).update({ tm_deletion_scheduled: new Date() });
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('.gate[data-reason=ACCOUNT_FROZEN]');
    const text = await textOf(page);
    expect(text).to.include('This account is frozen');
    expect(text).to.include('Cancel the deletion');
    expect(await page.$('nav')).to.equal(null);
    expect(await page.$('table')).to.equal(null);
    await shot(rig, page, 'gate-frozen');
    // nothing else is reachable: a deep link still shows the banner only
    await page.goto(`${rig.base}/console/#/numbers`);
    await page.waitForSelector('.gate');
    expect(await page.$('nav')).to.equal(null);
    await page.click('.gate button.primary');
    await page.waitForSelector('nav a[aria-current=page]');
    const c = await rig.t.ctx.repos.customers.get(f.customer.id);
    expect(c?.status).to.equal('active');
    await page.close();
  });

  it('the operator view is there for a ProjectSuperAdmin: customers, billing balance add, providers, trunks, routes', async () => {
    const op = await createFixture(rig.t.ctx, { permission: PERMISSION_BY_NAME.ProjectSuperAdmin });
    const cust = await createFixture(rig.t.ctx);
    const page = await signIn(rig, op.admin.username, op.password);
    await page.waitForSelector('nav a[href="#/operator"]');
    await page.click('nav a[href="#/operator"]');
    await page.waitForSelector('table[aria-label="Customers"]');
    expect(await textOf(page)).to.include(cust.customer.email);
    for (const t of ['Billing', 'Providers', 'Trunks', 'Routes']) expect(await textOf(page)).to.include(t);
    // add credit to the customer's billing account through the page
    const acct = await request(rig.t.app).get('/v1.0/billing_account').query({ accesskey: cust.accesskey });
    expect(acct.status).to.equal(200);
    await page.reload();
    const row = `table[aria-label="Billing accounts"] tr[data-id="${acct.body.id}"]`;
    await page.waitForSelector(row);
    await page.type(`${row} input`, '12.5');
    await page.click(`${row} button`);
    await page.waitForFunction(`document.querySelector(${JSON.stringify(row)})?.textContent.includes('12.50')`);
    const after = await request(rig.t.app).get('/v1.0/billing_account').query({ accesskey: cust.accesskey });
    expect(after.body.balance).to.equal(acct.body.balance + 12.5);
    await shot(rig, page, 'operator');
    // a phone-sized screen: the menu folds, the tables become cards
    await page.setViewport(PHONE);
    await page.waitForSelector('.menu-toggle');
    const navDisplay = () => js<string>(page, `getComputedStyle(document.querySelector('nav')).display`);
    expect(await navDisplay()).to.equal('none');
    await page.click('.menu-toggle');
    expect(await navDisplay()).to.equal('block');
    const overflow = await js<number>(page, 'document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).to.be.at.most(0);
    await shot(rig, page, 'operator-phone');
    await page.close();
  });

  it('sign up in the page; the verification link lands in the console and verifies; after setting the password, sign in', async () => {
    const email = `signup-${Date.now()}@example.test`;
    const page = await signUpInPage(rig, email, 'Acme', 'sign-up');
    const mail = await until(() => lastMail(rig.t.ctx.config.outboxDir, email, 'verification'), 5000, 'verification mail');
    await page.goto(`${rig.base}/console/#/verify?token=${mail.token}`);
    await page.waitForSelector('section[aria-label="Verify your email"] button.primary');
    await page.click('section[aria-label="Verify your email"] button.primary');
    await page.waitForFunction(`document.body.innerText.includes('Your email is verified')`);
    const c = await rig.t.ctx.repos.customers.getByEmail(email);
    expect(c).to.include({ status: 'active', email_verified: true });
    // the same link again: used, the page offers a new one
    await page.reload();
    await page.click('section[aria-label="Verify your email"] button.primary');
    await page.waitForFunction(`document.body.innerText.includes('expired or was already used')`);
    // the welcome mail sets the password (the auth group's own page), then the console signs in
    const welcome = await until(() => lastMail(rig.t.ctx.config.outboxDir, email, 'welcome'), 5000, 'welcome mail');
    const password = 'console-pass-123';
    expect((await request(rig.t.app).post('/auth/password-reset').send({ token: welcome.token, password })).status).to.equal(200);
    const signed = await signIn(rig, email, password);
    await signed.waitForSelector('nav a[aria-current=page]');
    expect(await textOf(signed)).to.include('Acme');
    await page.close();
    await signed.close();
  });

  it('an expired account is refused at sign-in with the banner and a new verification link on request', async () => {
    const email = `expired-${Date.now()}@example.test`;
    const f = await createFixture(rig.t.ctx, { status: 'expired', email, username: email }); // the admin agent's username is the email
    await rig.t.ctx.db('customers').where({ id: f.customer.id }).update({ email_verified: false });
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('.gate[data-reason=ACCOUNT_EXPIRED]');
    expect(await page.$('nav')).to.equal(null);
    await fill(page, '.gate input[type=email]', f.customer.email);
    await page.click('.gate button.primary');
    await page.waitForFunction(`document.body.innerText.includes('new verification link is on its way')`);
    await until(() => lastMail(rig.t.ctx.config.outboxDir, f.customer.email, 'verification'), 5000, 'verification mail');
    await shot(rig, page, 'gate-expired');
    await page.close();
  });
});
