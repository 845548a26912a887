// Numbers, extensions (the provisioning QR code decodes to the URL the API returned), flows (an
// edit saved through the page, bad JSON and bad actions refused), webhooks with the delivery log and
// the signing secret (masked, a new one shown once), and access keys created and revoked: each
// through the page in Chromium, checked against the API.
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import request from 'supertest';
import type { Page } from 'puppeteer-core';
import { createAgent, type Fixture } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { freePort } from '../../testkit/ports';
import { until } from '../../testkit/media-app/harness';
import { js, PHONE, shot, signIn, textOf, type ConsoleRig, useConsolePage } from './support';

const run = promisify(execFile);

describe('console: numbers, extensions, flows, webhooks, access keys (Chromium)', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let page: Page;
  const api = (method: 'get' | 'post' | 'put' | 'delete', p: string, key = f.accesskey) => request(rig.t.app)[method](`/v1.0${p}`).query({ accesskey: key });
  const { open } = useConsolePage({}, (s) => ({ rig, f, page } = s));

  it('an extension created in the page shows a QR code that decodes to the provisioning URL the API returned, counting down', async () => {
    await open('extensions', 'form[aria-label="Create an extension"]');
    await page.type('input[name=extension]', '2001');
    await page.type('input[name=name]', 'Front desk');
    await page.click('form[aria-label="Create an extension"] button[type=submit]');
    await page.waitForSelector('.secret');
    const pressed = page.waitForResponse((r) => r.url().endsWith('/provisioning-token') && r.request().method() === 'POST');
    await page.click('button[data-action=show-qr]');
    const issued = (await (await pressed).json()) as { url: string; expire: string; token: string };
    const canvas = await page.waitForSelector('.qr canvas');
    const png = path.join(rig.shots, 'qr-only.png');
    await canvas!.screenshot({ path: png as `${string}.png` });
    const { stdout } = await run('zbarimg', ['--quiet', '--raw', png]);
    expect(stdout.trim()).to.equal(issued.url);
    expect(issued.url).to.equal(`${rig.base}/provisioning/extension?token=${issued.token}`);
    // the URL is the real thing: it serves this extension's configuration to the app that scans it
    // (the Linphone apps name themselves; a User-Agent naming no phone gets 400 without credentials)
    const conf = await request(rig.t.app)
      .get(new URL(issued.url).pathname + new URL(issued.url).search)
      .set('User-Agent', 'LinphoneAndroid/5.2.5 (Pixel 7) LinphoneSDK/5.2.5');
    expect(conf.status, conf.text).to.equal(200);
    expect(conf.text).to.include('2001');
    // the expiry counts down
    const left = () => js<string>(page, `document.querySelector('[data-field=countdown]').textContent`);
    const first = await left();
    expect(first).to.match(/^(9:5\d|10:00)$/);
    await page.waitForFunction(`document.querySelector('[data-field=countdown]').textContent !== ${JSON.stringify(first)}`, { timeout: 3000 });
    await shot(rig, page, 'extension-qr');
  });

  it('a virtual number bought in the page gets the flow chosen for it; the flow is attached and changed from the list', async () => {
    const flow = (await api('post', '/flows').send({ name: 'Reception', actions: [{ type: 'answer' }, { type: 'hangup' }] })).body as { id: string };
    await open('numbers', 'form[aria-label="Buy a virtual number"]');
    await page.waitForSelector(`form[aria-label="Buy a virtual number"] option[value="${flow.id}"]`);
    const number = await js<string>(page, `document.querySelector('input[name=number]').value`);
    expect(number).to.match(/^\+899\d{9}$/);
    await page.select('form[aria-label="Buy a virtual number"] select', flow.id);
    await page.click('form[aria-label="Buy a virtual number"] button[type=submit]');
    await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(number)}) && document.querySelector('table[aria-label=Numbers]')`);
    const bought = ((await api('get', '/numbers')).body.result as { number: string; call_flow_id: string; id: string }[]).find((n) => n.number === number);
    expect(bought?.call_flow_id).to.equal(flow.id);
    // detach it from the list
    await page.select(`table[aria-label=Numbers] tr[data-id="${bought!.id}"] select`, '00000000-0000-0000-0000-000000000000');
    await until(async () => ((await api('get', `/numbers/${bought!.id}`)).body.call_flow_id === '00000000-0000-0000-0000-000000000000' ? true : null), 5000, 'detached');
    await shot(rig, page, 'numbers');
  });

  it('a flow edited as JSON in the page is saved through the API; bad JSON and a bad action are refused with the reason', async () => {
    const flow = (await api('post', '/flows').send({ name: 'IVR', actions: [{ type: 'answer' }, { type: 'talk', option: { text: 'Welcome.', language: 'en-US' } }, { type: 'hangup' }] })).body as {
      id: string;
    };
    await open(`flows/${flow.id}`, 'ol.actions li');
    expect(await textOf(page)).to.include('says “Welcome.” in en-US');
    const setText = (text: string) =>
      js(page, `(() => { const t = document.querySelector('textarea.code'); t.value = ${JSON.stringify(text)}; t.dispatchEvent(new Event('input', { bubbles: true })); })()`);
    const edited = {
      name: 'IVR v2',
      actions: [
        { type: 'answer' },
        { type: 'talk', option: { text: 'Press one for sales.', language: 'en-GB' } },
        { type: 'digits_receive', option: { duration: 3000, length: 1 } },
        { type: 'hangup' },
      ],
    };
    await setText(JSON.stringify(edited, null, 2));
    await page.click('textarea.code + * button.primary, .buttons button.primary');
    await page.waitForSelector('[data-field=saved]');
    const saved = (await api('get', `/flows/${flow.id}`)).body as { name: string; actions: { type: string; option: Record<string, unknown> }[] };
    expect(saved.name).to.equal('IVR v2');
    expect(saved.actions.map((a) => a.type)).to.deep.equal(['answer', 'talk', 'digits_receive', 'hangup']);
    expect(saved.actions[1]!.option.text).to.equal('Press one for sales.');
    await page.waitForFunction(`document.body.innerText.includes('says “Press one for sales.” in en-GB')`);
    await shot(rig, page, 'flow');
    // not JSON: refused in the page, nothing sent
    await setText('{ "actions": [ ');
    await page.click('.buttons button.primary');
    await page.waitForFunction(`document.body.innerText.includes('Not valid JSON')`);
    // an unknown action type: the API's own validation answers, shown as is; the flow is unchanged
    await setText(JSON.stringify({ actions: [{ type: 'agent_call' }] }));
    await page.click('.buttons button.primary');
    await page.waitForFunction(`document.body.innerText.includes('INVALID_ARGUMENT')`);
    expect((await api('get', `/flows/${flow.id}`)).body.name).to.equal('IVR v2');
  });

  it("the webhook set in the page receives the account's events, and the delivery log in the page shows them", async () => {
    const got: string[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push(body);
        res.writeHead(200).end('ok');
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', () => r()));
    try {
      await open('webhooks', 'form[aria-label="Webhook settings"]');
      await page.type('input[name=webhook_uri]', `http://127.0.0.1:${port}/hook`);
      await page.click('form[aria-label="Webhook settings"] button[type=submit]');
      await page.waitForFunction(`document.body.innerText.includes('Saved.')`);
      expect((await api('get', '/customer')).body.webhook_uri).to.equal(`http://127.0.0.1:${port}/hook`);
      // an event of the account (a number renamed elsewhere) reaches the receiver...
      // (the webhook service caches a customer's hook for a second: rename again until one is sent)
      const n = ((await api('get', '/numbers')).body.result as { id: string }[])[0]!;
      let i = 0;
      await until(
        async () => {
          if (got.some((b) => b.includes('number_updated'))) return true;
          expect((await api('put', `/numbers/${n.id}`).send({ name: `hooked ${++i}` })).status).to.equal(200);
          await new Promise((r) => setTimeout(r, 400));
          return null;
        },
        10_000,
        'webhook delivery',
      );
      // ...and the log in the page says so
      await until(async () => (((await api('get', '/webhook_deliveries')).body.result as { status: string }[]).some((d) => d.status === 'delivered') ? true : null), 10_000, 'delivered');
      await page.click('button[data-action=refresh-log]');
      await page.waitForSelector('table[aria-label="Webhook deliveries"] .wh-delivered');
      expect(await textOf(page)).to.include('number_updated');
      // "Send a test event": the receiver gets a webhook_test, and the page shows its delivery
      const before = got.length;
      await page.click('button[data-action=webhook-test]');
      await until(async () => (got.slice(before).some((b) => JSON.parse(b).event_type === 'webhook_test') ? true : null), 10_000, 'the test event at the receiver');
      await page.waitForSelector('[data-field=webhook-test][data-status=delivered]', { timeout: 10_000 });
      expect(await js<string>(page, `document.querySelector('[data-field=webhook-test]').innerText`)).to.include('HTTP 200');
      await page.waitForFunction(
        `[...document.querySelectorAll('table[aria-label="Webhook deliveries"] tr')].some((tr) => tr.innerText.includes('webhook_test') && tr.querySelector('.wh-delivered'))`,
        { timeout: 5000 },
      );
      const tests = got.filter((b) => JSON.parse(b).event_type === 'webhook_test');
      expect(tests).to.have.length(1);
      const testEvent = JSON.parse(tests[0]!) as { data: { customer_id: string } };
      expect(testEvent.data.customer_id).to.equal(f.customer.id);
      await shot(rig, page, 'webhooks');
    } finally {
      receiver.close();
    }
  });

  it('the signing secret shows masked; a new one made in the page is shown whole once, and reads mask it again', async () => {
    const stored = async () => ((await rig.t.ctx.db('customers').where({ id: f.customer.id }).first('webhook_secret')) as { webhook_secret: string }).webhook_secret;
    const masked = (s: string) => `${'*'.repeat(s.length - 4)}${s.slice(-4)}`;
    const shown = () => js<string>(page, `document.querySelector('[data-field=webhook-secret-masked]').textContent`);
    const before = await stored();
    await open('webhooks', '[data-field=webhook-secret-masked]');
    await page.waitForFunction(`document.querySelector('[data-field=webhook-secret-masked]').textContent.length > 0`);
    expect(await shown()).to.equal(masked(before));
    expect(await page.content()).to.not.contain(before);
    await page.click('button[data-action=webhook-secret-rotate]');
    const fresh = await (await page.waitForSelector('[data-field=webhook-secret]'))!.evaluate((e) => e.textContent ?? '');
    expect(fresh).to.equal(await stored());
    expect(fresh).to.not.equal(before);
    // the page reads the customer again, masked by the API
    await page.waitForFunction(`document.querySelector('[data-field=webhook-secret-masked]').textContent === ${JSON.stringify(masked(fresh))}`, { timeout: 5000 });
    // the page read again: masked only
    await page.reload();
    await page.waitForFunction(`document.querySelector('[data-field=webhook-secret-masked]')?.textContent.length > 0`);
    expect(await shown()).to.equal(masked(fresh));
    expect(await page.content()).to.not.contain(fresh);
  });

  it('a manager sees the signing secret masked and no way to make a new one (the route is admin-only)', async () => {
    const manager = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerManager);
    const mp = await signIn(rig, manager.agent.username, manager.password);
    try {
      await mp.waitForSelector('nav a[aria-current=page]');
      await mp.goto(`${rig.base}/console/#/webhooks`);
      await mp.waitForFunction(`document.querySelector('[data-field=webhook-secret-masked]')?.textContent.length > 0`);
      expect(await mp.$('button[data-action=webhook-secret-rotate]')).to.equal(null);
      expect(await js<string>(mp, `document.querySelector('[data-field=webhook-secret-admin-only]').textContent`)).to.equal('An admin makes a new one');
      expect(await js<string>(mp, `document.querySelector('[data-field=webhook-secret-masked]').textContent`)).to.match(/^\*+.{4}$/);
    } finally {
      await mp.close();
    }
  });

  it('an access key created in the page works, and revoking it in the page stops it', async () => {
    await open('accesskeys', 'form[aria-label="Create an access key"]');
    await page.type('form[aria-label="Create an access key"] input[name=name]', 'ci');
    await page.click('form[aria-label="Create an access key"] button[type=submit]');
    const tokenEl = await page.waitForSelector('[data-field=accesskey]');
    const token = await tokenEl!.evaluate((e) => e.textContent ?? '');
    expect((await api('get', '/customer', token)).status).to.equal(200);
    const keys = (await api('get', '/accesskeys')).body.result as { id: string; name: string }[];
    const ci = keys.find((k) => k.name === 'ci')!;
    await page.waitForSelector(`table[aria-label="Access keys"] tr[data-id="${ci.id}"] button`);
    await shot(rig, page, 'accesskeys');
    await page.click(`table[aria-label="Access keys"] tr[data-id="${ci.id}"] button`);
    await page.waitForFunction(`!document.querySelector('table[aria-label="Access keys"] tr[data-id="${ci.id}"]')`);
    expect((await api('get', '/customer', token)).status).to.equal(401);
  });

  it("agents and queues: who is available shows, and changes live when an agent's status changes elsewhere", async () => {
    const a = await api('post', '/agents').send({ username: `desk-${Date.now()}@example.test`, password: 'agent-pass-123', name: 'Dana Desk' });
    expect(a.status, JSON.stringify(a.body)).to.equal(201);
    const q = await api('post', '/queues').send({ name: 'Support' });
    expect(q.status, JSON.stringify(q.body)).to.be.oneOf([200, 201]);
    await open('contact-center', 'table[aria-label=Agents]');
    const row = `table[aria-label=Agents] tr[data-id="${a.body.id}"]`;
    await page.waitForSelector(row);
    expect(await js<string>(page, `document.querySelector(${JSON.stringify(row)}).innerText`)).to.include('offline');
    expect(await textOf(page)).to.include('Support');
    expect(await page.$('#phone-slot')).to.not.equal(null);
    expect((await api('put', `/agents/${a.body.id}/status`).send({ status: 'available' })).status).to.equal(200);
    await page.waitForFunction(`document.querySelector(${JSON.stringify(row)})?.innerText.includes('available')`, { timeout: 3000 });
    await shot(rig, page, 'contact-center');
  });

  it('every page reads on a phone-sized screen without sideways scrolling', async () => {
    await page.setViewport(PHONE);
    for (const [hash, ready] of [
      ['calls', 'main .card'],
      ['numbers', 'table'],
      ['extensions', 'table'],
      ['flows', 'table'],
      ['recordings', 'main .card'],
      ['contact-center', '#phone-slot'],
      ['webhooks', 'main .card'],
      ['accesskeys', 'table'],
    ] as const) {
      await open(hash, ready);
      const overflow = await js<number>(page, 'document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, hash).to.be.at.most(0);
      if (hash === 'flows' || hash === 'extensions' || hash === 'contact-center') await shot(rig, page, `${hash}-phone`);
    }
    // keyboard: the skip link and the navigation are reachable with Tab
    await page.keyboard.press('Tab');
    expect(await js<string>(page, 'document.activeElement.textContent')).to.equal('Skip to content');
    expect(rig.browser.errors.filter((e) => !/Failed to load resource/.test(e))).to.deep.equal([]);
  });
});
