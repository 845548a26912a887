/**
 * The console under test: a real control-api (Postgres, Redis, /v1.0/ws) listening on loopback,
 * serving the freshly built console at /console, optionally beside the call plane (sip-server +
 * media-app) sharing its Redis prefix and data folder; Debian's Chromium drives it.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import { buildWebApp } from '../../scripts/build-web';
import { attachWebSocket, type WebSocketService } from '../../control-api/ws';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { chromiumAvailable, launchBrowser, type TestBrowser } from '../../testkit/browser';
import { startPlatform, type Platform } from '../../testkit/media-app/harness';
import { startEventStore } from '../../core/events/store';
import { eventStreamKey } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { startWebhooks } from '../../control-api/webhooks';

export interface ConsoleRig {
  t: TestApp;
  base: string;
  browser: TestBrowser;
  platform: Platform | null;
  /** control-api's /v1.0/ws (its hub: the sockets and the topics each holds) */
  ws: WebSocketService;
  shots: string;
  close(): Promise<void>;
}

export interface ConsoleOptions {
  /** sip-server + media-app beside control-api (same Redis prefix and data folder). */
  platform?: boolean;
  /**
   * The browser phone too (implies `platform`): sip-server's ws listener (SIP_WSS_PUBLIC_URL),
   * media through this rtpengine, and Chromium with a fake microphone playing `wav` and loopback
   * ICE candidates allowed.
   */
  phone?: { rtpengineNg: string; wav?: string };
  /** More settings for control-api (e.g. SMTP_URL). */
  env?: Record<string, string>;
}

export async function startConsole(opts: ConsoleOptions = {}): Promise<ConsoleRig> {
  await buildWebApp('console');
  if (opts.phone) await buildWebApp('phone');
  const platformEnv = { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_CAPTURE: 'on', ...(opts.phone ? { RTPENGINE_NG: opts.phone.rtpengineNg } : {}) };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // the console (and its phone) is served from `base`, the PUBLIC_URL: the origin sip-server's WebSocket allows
  const sip = { listen: { wsPort: 0 }, security: { wsAllowedOrigins: [base] } };
  const platform = opts.platform || opts.phone ? await startPlatform(platformEnv, opts.phone ? { sip } : {}) : null;
  const env: Record<string, string> = { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', PUBLIC_URL: base };
  if (platform) Object.assign(env, { REDIS_KEY_PREFIX: platform.config.redisKeyPrefix, DATA_DIR: platform.config.dataDir, SIP_DOMAIN: platform.config.sipDomain });
  Object.assign(env, opts.env);
  if (platform && opts.phone) env.SIP_WSS_PUBLIC_URL = `ws://127.0.0.1:${platform.stack.listeningPoint('ws')!.port}`;
  const t = await buildTestApp({ env });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ws: WebSocketService = await attachWebSocket(server, t.ctx);
  // The events store behind /timelines (a group of its own: the stream is shared by every suite).
  const store = await startEventStore(t.ctx.db, t.ctx.redis, { stream: eventStreamKey(t.ctx.config.redisKeyPrefix), group: `console-store-${newId()}` });
  const webhooks = await startWebhooks(t.ctx, { group: `console-webhooks-${newId()}` });
  const browser = await launchBrowser(opts.phone ? { fakeAudioWav: opts.phone.wav, args: ['--allow-loopback-in-peer-connection'] } : {});
  const shots = process.env.CONSOLE_SHOTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ov-console-shots-'));
  fs.mkdirSync(shots, { recursive: true });
  return {
    t,
    base,
    browser,
    platform,
    ws,
    shots,
    async close() {
      await browser.close();
      await ws.close();
      await store.close();
      await webhooks.close();
      server.closeAllConnections();
      server.close();
      await t.close();
      await platform?.close();
    },
  };
}

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** A page in a browser context of its own (own cookies), its errors collected in rig.browser.errors. */
export async function freshPage(rig: ConsoleRig): Promise<Page> {
  const context = await rig.browser.browser.createBrowserContext();
  const page = await context.newPage();
  page.on('pageerror', (err) => rig.browser.errors.push(`pageerror: ${err instanceof Error ? err.message : String(err)}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') rig.browser.errors.push(`console: ${msg.text()}`);
  });
  page.on('close', () => void context.close().catch(() => undefined));
  return page;
}

/** A new page (own cookies) at the sign-in form, signed in with the given credentials. */
export async function signIn(rig: ConsoleRig, username: string, password: string, viewport = LAPTOP): Promise<Page> {
  const page = await freshPage(rig);
  await page.setViewport(viewport);
  await page.goto(`${rig.base}/console/`, { waitUntil: 'load' });
  await page.waitForSelector('form[aria-label="Sign in"]');
  await page.type('input[name=username]', username);
  await page.type('input[name=password]', password);
  await page.click('button[type=submit]');
  return page;
}

/** A new page (own cookies) that signs up in the console (`shotName`: a screenshot of the filled form); it shows "Check your mailbox". */
export async function signUpInPage(rig: ConsoleRig, email: string, name: string, shotName?: string): Promise<Page> {
  const page = await freshPage(rig);
  await page.goto(`${rig.base}/console/`);
  await page.waitForSelector('form[aria-label="Sign in"]');
  await page.click('a[href="#/signup"]');
  await page.waitForSelector('form[aria-label="Sign up"]');
  await page.type('input[name=email]', email);
  await page.type('input[name=name]', name);
  if (shotName) await shot(rig, page, shotName);
  await page.click('form[aria-label="Sign up"] button[type=submit]');
  await page.waitForFunction(`document.body.innerText.includes('Check your mailbox')`);
  return page;
}

export interface ConsolePage {
  rig: ConsoleRig;
  /** the customer whose admin is signed in on `page` */
  f: Fixture;
  page: Page;
}

/**
 * Mocha hooks of a console suite on one signed-in page (all skipped where Chromium is missing): the
 * console (`opts`), a customer, and its admin signed in on a laptop-sized page, dialogs accepted; the page
 * and then the console closed after the suite. `ready` gets them once up; `open` shows a route of the
 * console on that page (`#/hash`) once `ready` (a selector) is there.
 */
export function useConsolePage(opts: ConsoleOptions, ready: (s: ConsolePage) => void): { open(hash: string, ready: string): Promise<void> } {
  let rig: ConsoleRig | undefined;
  let page: Page | undefined;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole(opts);
    const f = await createFixture(rig.t.ctx);
    page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('nav a[aria-current=page]');
    page.on('dialog', (d) => void d.accept());
    ready({ rig, f, page });
  });
  after(async () => {
    await page?.close();
    await rig?.close();
  });
  return {
    async open(hash, selector) {
      await page!.goto(`${rig!.base}/console/#/${hash}`);
      await page!.waitForSelector(selector);
    },
  };
}

/** A screenshot into the rig's folder (a PNG per page and viewport). */
export async function shot(rig: ConsoleRig, page: Page, name: string): Promise<string> {
  const file = path.join(rig.shots, `${name}.png`);
  await page.screenshot({ path: file as `${string}.png`, fullPage: false });
  return file;
}

/** Evaluates a JavaScript expression in the page (a string: the test code has no DOM types). */
export const js = <T>(page: Page, expr: string): Promise<T> => page.evaluate(expr) as Promise<T>;

/** The visible text of the page (what a person reads). */
export const textOf = (page: Page) => js<string>(page, 'document.body.innerText');
