// The browser phone's test rig: control-api on a loopback HTTP port (it serves /phone/ and the REST
// API), the call plane (sip-server + media-app, startPlatform) on the same Redis key prefix, the
// phone built by buildWebApp, Chromium with a fake microphone playing a sox tone, and page helpers
// that drive the phone through its labelled controls like a user.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Page } from 'puppeteer-core';
import { buildWebApp } from '../../scripts/build-web';
import { buildTestApp, type TestApp } from '../support/api';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startPlatform, until, type Platform } from '../media-app/harness';

export interface Rig {
  t: TestApp;
  p: Platform;
  /** http://127.0.0.1:port of control-api. */
  base: string;
  prefix: string;
  close(): Promise<void>;
}

/** control-api listening on loopback, with the call plane on the same Redis prefix and database. */
export async function startRig(opts: { apiEnv?: Record<string, string>; platformEnv?: Record<string, string> } = {}): Promise<Rig> {
  await buildWebApp('phone');
  const prefix = `twr${process.pid}_${randomBytes(4).toString('hex')}:`;
  const p = await startPlatform({ REDIS_KEY_PREFIX: prefix, EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...opts.platformEnv });
  const t = await buildTestApp({ env: { REDIS_KEY_PREFIX: prefix, SIP_DOMAIN: 'sip.test', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...opts.apiEnv } });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    t,
    p,
    base,
    prefix,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
      await p.close();
    },
  };
}

/** A mono 16-bit 48 kHz WAV of a sine tone made by sox (the fake microphone's input). */
export function toneWav(hz: number, seconds = 30): string {
  const file = path.join(os.tmpdir(), `webphone-tone-${hz}-${seconds}.wav`);
  if (!fs.existsSync(file)) execFileSync('sox', ['-n', '-r', '48000', '-b', '16', '-c', '1', file, 'synth', String(seconds), 'sine', String(hz), 'vol', '0.5']);
  return file;
}

/**
 * Chromium for the phone: fake microphone from `wav`, loopback ICE candidates allowed (Chromium
 * leaves loopback out by default; the page's `ice=loopback` option then offers only those).
 */
export function phoneBrowser(wav?: string, opts: { ignoreCertificateErrors?: boolean } = {}): Promise<TestBrowser> {
  return launchBrowser({ fakeAudioWav: wav, ignoreCertificateErrors: opts.ignoreCertificateErrors, args: ['--allow-loopback-in-peer-connection'] });
}

/** A new page where functions passed to page.evaluate may be named (tsx compiles them with esbuild's __name helper). */
export async function newPage(b: TestBrowser): Promise<Page> {
  const page = await b.page();
  await page.evaluateOnNewDocument('globalThis.__name = (f) => f;');
  return page;
}

/** Opens the phone page; `raw` audio (no processing) and loopback-only ICE unless told otherwise. */
export async function openPhone(b: TestBrowser, base: string, query = 'audio_processing=off&ice=loopback'): Promise<Page> {
  const page = await newPage(b);
  await page.goto(`${base}/phone/?${query}`, { waitUntil: 'load' });
  await page.waitForSelector('#sign-in, #call-state');
  return page;
}

async function fill(page: Page, selector: string, value: string): Promise<void> {
  await page.click(selector, { count: 3 });
  await page.type(selector, value);
}

export async function signInExtension(page: Page, uri: string, password: string, wsUrl?: string): Promise<void> {
  await page.click('input[name=mode][value=extension]');
  await fill(page, '#sip_uri', uri);
  await fill(page, '#password', password);
  if (wsUrl && (await page.$('#ws_url'))) await fill(page, '#ws_url', wsUrl);
  await page.click('#sign-in-button');
}

export async function signInAgent(page: Page, username: string, password: string, wsUrl?: string): Promise<void> {
  await fill(page, '#username', username);
  await fill(page, '#password', password);
  if (wsUrl && (await page.$('#ws_url'))) await fill(page, '#ws_url', wsUrl);
  await page.click('#sign-in-button');
}

export const regState = (page: Page) => page.$eval('#registration', (e) => e.getAttribute('data-state') ?? '');
export const callPhase = (page: Page) => page.$eval('#call-state', (e) => e.getAttribute('data-phase') ?? '').catch(() => '');
export const callText = (page: Page) => page.$eval('#call-state', (e) => e.textContent ?? '').catch(() => '');
export const errorText = (page: Page) => page.$eval('#error', (e) => e.textContent ?? '');

export async function waitReg(page: Page, state: string, ms = 10_000): Promise<void> {
  await until(async () => (await regState(page)) === state, ms, `registration ${state} (is ${await regState(page)}, error "${await errorText(page)}")`);
}

export async function waitPhase(page: Page, phase: string, ms = 10_000): Promise<void> {
  await until(async () => (await callPhase(page)) === phase, ms, `call phase ${phase} (is ${await callPhase(page)}: ${await callText(page)})`);
}

export interface AudioStats {
  inbound: { packetsReceived: number; audioLevel: number; bytesReceived: number } | null;
  outbound: { packetsSent: number; bytesSent: number } | null;
}

/** getStats of the page's call (inbound-rtp / outbound-rtp audio), through the page's `window.openvoicePhone`. */
export async function audioStats(page: Page): Promise<AudioStats> {
  return (await page.evaluate('window.openvoicePhone.stats()')) as AudioStats;
}
