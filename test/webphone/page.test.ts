// The browser phone page in Chromium, without a call: it loads under its CSP with no console error,
// every control has a label and is reachable with the keyboard, an agent signs in through
// POST /auth/login + the browser SIP credential, wrong input gets a clear message, and an embedding
// page of the same origin drives it with postMessage.
import { expect } from 'chai';
import http from 'node:http';
import type { Page } from 'puppeteer-core';
import { Permission } from '../../core/permissions';
import { createAgent, createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable, type TestBrowser } from '../../testkit/browser';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, until } from '../../testkit/media-app/harness';
import { errorText, newPage, openPhone, phoneBrowser, regState, signInAgent, startRig, type Rig } from '../../testkit/webphone/harness';

describe('webphone: the page in Chromium', function () {
  this.timeout(90_000);
  let rig: Rig;
  let b: TestBrowser;
  let f: Fixture;
  let closedWs: string;

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    await truncateAll();
    // a SIP WebSocket URL nobody listens on: sign-in gets as far as connecting
    closedWs = `ws://127.0.0.1:${await freePort()}`;
    rig = await startRig({ apiEnv: { SIP_WSS_PUBLIC_URL: closedWs } });
    f = await createFixture(rig.t.ctx);
    b = await phoneBrowser();
  });
  after(async () => {
    await b?.close();
    await rig?.close();
  });

  it('loads under its CSP without a console error; every control is labelled and keyboard reachable', async () => {
    const page = await openPhone(b, rig.base);
    expect(b.errors).to.deep.equal([]);
    // every form control has an accessible label
    const unlabelled = (await page.evaluate(`[...document.querySelectorAll('input, button')]
      .filter((e) => !((e.labels?.length ?? 0) > 0 || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent.trim())))
      .map((e) => e.outerHTML)`)) as string[];
    expect(unlabelled).to.deep.equal([]);
    // Tab walks through the sign-in form to the submit button
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      seen.push((await page.evaluate(`document.activeElement?.id || document.activeElement?.value || ''`)) as string);
    }
    expect(seen).to.include.members(['username', 'password', 'sign-in-button']);
  });

  it('an agent signs in with username and password: login, credential, then the phone connects to the configured WebSocket', async () => {
    const { ext } = await createExtension(f.customer.id);
    const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    await rig.t.ctx.repos.agents.update(a.agent.id, { addresses: [{ type: 'extension', target: ext.extension }] });
    const page = await openPhone(b, rig.base);
    const ws = new Promise<string>((resolve) => {
      void page
        .target()
        .createCDPSession()
        .then(async (cdp) => {
          await cdp.send('Network.enable');
          cdp.on('Network.webSocketCreated', (e: { url: string }) => resolve(e.url));
        });
    });
    await signInAgent(page, a.agent.username, a.password);
    expect(await ws).to.equal(`${closedWs}/`);
    await until(async () => ['connecting', 'failed'].includes(await regState(page)), 10_000, 'registration attempt');
    expect(await page.$eval('#registration', (e) => e.textContent ?? '')).to.contain(ext.username);
    // sign-out revokes the credential on the platform
    await page.click('#sign-out');
    await until(async () => (await regState(page)) === 'signed-out', 5000, 'signed out');
    // the page shows signed-out before its DELETE of the credential has finished: wait for the platform
    await until(async () => (await rig.t.ctx.redis.keys(`${rig.prefix}websip:cred:*`)).length === 0 || null, 5000, 'credential revoked').catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await rig.t.ctx.redis.keys(`${rig.prefix}websip:cred:*`))}`);
    });
  });

  it('wrong password and an agent without an extension get a clear message', async () => {
    const page = await openPhone(b, rig.base);
    const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    await signInAgent(page, a.agent.username, 'wrong-password');
    await until(async () => (await errorText(page)).length > 0, 5000, 'error shown');
    expect(await errorText(page)).to.equal('wrong username or password');
    await signInAgent(page, a.agent.username, a.password);
    await until(async () => /no extension/.test(await errorText(page)), 5000, 'no-extension error shown');
    expect(await regState(page)).to.equal('signed-out');
  });

  it('an embedding page of the same origin gets postMessage events and drives the phone', async () => {
    // an embedding document of the same origin (any page of control-api without the phone's CSP, as the
    // console's will be) adds an iframe of /phone/
    const page = await newPage(b);
    await page.goto(`${rig.base}/healthz`);
    const frameEvents = (await page.evaluate(`(async () => {
      const got = [];
      window.addEventListener('message', (e) => got.push(e.data));
      const iframe = document.createElement('iframe');
      iframe.src = '/phone/?embed=1';
      iframe.setAttribute('allow', 'microphone; autoplay');
      document.body.appendChild(iframe);
      const wait = (pred) => new Promise((r) => { const i = setInterval(() => { if (pred()) { clearInterval(i); r(); } }, 50); });
      const has = (type) => () => got.some((m) => m.type === type);
      await wait(has('ready'));
      iframe.contentWindow.postMessage({ channel: 'openvoice-phone', command: 'dial', target: '1001' }, location.origin);
      iframe.contentWindow.postMessage({ channel: 'openvoice-phone', command: 'sign-in-extension', uri: 'nobody@sip.test', password: 'x' }, location.origin);
      await wait(has('registration'));
      return got;
    })()`)) as { type: string; source: string }[];
    const types = frameEvents.map((m) => `${m.source}:${m.type}`);
    expect(types[0]).to.equal('openvoice-phone:ready');
    expect(types).to.include('openvoice-phone:error'); // dial before sign-in: "not registered"
    expect(types).to.include('openvoice-phone:registration');
  });

  it('a page of another origin can neither frame the phone nor get its events', async () => {
    // a page on another loopback origin frames the phone and tries to make it sign in
    const other = http.createServer((_req, res) => res.end('<!doctype html><title>other</title>'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as { port: number }).port;
    try {
      const page: Page = await newPage(b);
      await page.goto(`http://localhost:${port}/`);
      const events = (await page.evaluate(`(async () => {
        const got = [];
        window.addEventListener('message', (e) => got.push(e.data));
        const iframe = document.createElement('iframe');
        iframe.src = ${JSON.stringify(`${rig.base}/phone/?embed=1`)};
        document.body.appendChild(iframe);
        await new Promise((r) => iframe.addEventListener('load', r));
        await new Promise((r) => setTimeout(r, 1000));
        iframe.contentWindow.postMessage({ channel: 'openvoice-phone', command: 'sign-in-extension', uri: 'nobody@sip.test', password: 'x' }, '*');
        await new Promise((r) => setTimeout(r, 1000));
        return got;
      })()`)) as unknown[];
      // framing by another origin is refused by the CSP (frame-ancestors 'self'); no event ever reaches it
      expect(events).to.deep.equal([]);
    } finally {
      other.closeAllConnections();
      other.close();
    }
  });
});
