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
import { buildTestApp, type TestApp } from '../api';
import { chromiumAvailable, fill, launchBrowser, type TestBrowser } from '../browser';
import { truncateAll } from '../db';
import { Rtpengine } from '../rtpengine';
import type { Express } from 'express';
import type { Knex } from 'knex';
import request from 'supertest';
import { answerBye, killAllSipp, sipp, sleep, startPlatform, until, type Platform, type SippResult } from '../media-app/harness';
import { freePort } from '../ports';
import { callerUas } from '../queue/sip-parties';
import { queuecallsRepo, type QueuecallRow } from '../../core/repos/queuecalls';
import type { SipConfigInput } from '../../sip-config';
import type { TestCert } from '../tls-cert';
import { loopbackSdp } from '../sdp';

export interface Rig {
  t: TestApp;
  p: Platform;
  /** http://127.0.0.1:port of control-api. */
  base: string;
  prefix: string;
  /** ws:// (and wss:// with `tls`) URLs of sip-server's WebSocket listeners, when asked for. */
  wsUrl: string;
  wssUrl: string;
  /** A loopback port whose origin sip-server's WebSocket also allows: for a second control-api (apiServer). */
  sparePort: number;
  close(): Promise<void>;
}

export interface RigOptions {
  apiEnv?: Record<string, string>;
  platformEnv?: Record<string, string>;
  /** Open sip-server's ws listener (and wss with this certificate). */
  ws?: boolean;
  tls?: TestCert;
  /** SIP_WSS_PUBLIC_URL for control-api: 'ws' or 'wss' (the listener's URL), or a URL. */
  publicWs?: string;
}

/** control-api listening on loopback, with the call plane on the same Redis prefix and database. */
export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  await buildWebApp('phone');
  const prefix = `twr${process.pid}_${randomBytes(4).toString('hex')}:`;
  // the pages come from control-api's loopback port: the origin sip-server's WebSocket allows (as PUBLIC_URL's would be)
  const apiPort = await freePort();
  const sparePort = await freePort();
  const security = { wsAllowedOrigins: [`http://127.0.0.1:${apiPort}`, `http://127.0.0.1:${sparePort}`] };
  const sip: SipConfigInput = opts.ws
    ? { listen: { wsPort: 0, ...(opts.tls ? { wssPort: 0 } : {}) }, security, ...(opts.tls ? { tls: { certPath: opts.tls.certPath, keyPath: opts.tls.keyPath } } : {}) }
    : {};
  const p = await startPlatform({ REDIS_KEY_PREFIX: prefix, EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...opts.platformEnv }, { sip });
  const wsUrl = opts.ws ? `ws://127.0.0.1:${p.stack.listeningPoint('ws')!.port}` : '';
  const wssUrl = opts.tls ? `wss://127.0.0.1:${p.stack.listeningPoint('wss')!.port}` : '';
  const publicWs = opts.publicWs === 'ws' ? wsUrl : opts.publicWs === 'wss' ? wssUrl : opts.publicWs;
  const api = await apiServer(prefix, { ...(publicWs ? { SIP_WSS_PUBLIC_URL: publicWs } : {}), ...opts.apiEnv }, apiPort);
  const { t, base } = api;
  return {
    t,
    p,
    base,
    prefix,
    wsUrl,
    wssUrl,
    sparePort,
    async close() {
      await api.close();
      await p.close();
    },
  };
}

/**
 * A describe's WebRTC rig (skipped where Chromium is missing): before it the tables truncated, a real
 * rtpengine, the rig with the ws listener and its public URL on it (`opts` adds to the rig's options),
 * Chromium with a 1 kHz tone for microphone; handed to `ready`. After it: sipp, the browser, the rig and
 * rtpengine.
 */
export function useWebrtcRig(opts: Omit<RigOptions, 'ws' | 'publicWs'>, ready: (s: { rig: Rig; b: TestBrowser; rtp: Rtpengine }) => void): void {
  let rtp: Rtpengine | undefined;
  let rig: Rig | undefined;
  let b: TestBrowser | undefined;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    await truncateAll();
    rtp = await Rtpengine.create();
    rig = await startRig({ ...opts, ws: true, publicWs: 'ws', platformEnv: { RTPENGINE_NG: rtp.ng, ...opts.platformEnv } });
    b = await phoneBrowser(toneWav(1000), { ignoreCertificateErrors: !!opts.tls });
    ready({ rig, b, rtp });
  });
  after(async () => {
    killAllSipp();
    await b?.close();
    await rig?.close();
    await rtp?.dispose();
  });
}

/** Another control-api on a loopback port, on the rig's Redis prefix (e.g. with another SIP_WSS_PUBLIC_URL). */
export async function apiServer(prefix: string, env: Record<string, string> = {}, port = 0): Promise<{ t: TestApp; base: string; close(): Promise<void> }> {
  const t = await buildTestApp({ env: { REDIS_KEY_PREFIX: prefix, SIP_DOMAIN: 'sip.test', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env } });
  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    t,
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

/**
 * A mono 16-bit 48 kHz WAV of a sine tone made by sox (the fake microphone's input), shared by the test
 * processes: written aside and renamed into place, so another process never finds it half written.
 */
export function toneWav(hz: number, seconds = 30): string {
  const file = path.join(os.tmpdir(), `webphone-tone-${hz}-${seconds}.wav`);
  if (!fs.existsSync(file)) {
    const tmp = `${file}.tmp-${process.pid}.wav`;
    execFileSync('sox', ['-n', '-r', '48000', '-b', '16', '-c', '1', tmp, 'synth', String(seconds), 'sine', String(hz), 'vol', '0.5']);
    fs.renameSync(tmp, file);
  }
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
  inbound: { packetsReceived: number; audioLevel: number; bytesReceived: number; /** RMS level over the whole call (0..1) */ averageLevel: number } | null;
  outbound: { packetsSent: number; bytesSent: number } | null;
}

/** getStats of the page's call (inbound-rtp / outbound-rtp audio), through the page's `window.openvoicePhone`. */
export async function audioStats(page: Page): Promise<AudioStats> {
  return (await page.evaluate('window.openvoicePhone.stats()')) as AudioStats;
}

/**
 * A sipp extension phone answering one call with an SDP whose audio goes to `rtpPort` (an RtpParty
 * on loopback that records what it hears and plays its own tone), then waiting for the BYE.
 * Run it on the port the extension registered from (registerOnly), like testkit/media-app/phones.ts.
 */
export function calleeToParty(user: string, rtpPort: number, byeTimeoutMs = 30_000): string {
  const reply = (status: string, extra: string) => `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]wpcallee
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:${user}@[local_ip]:[local_port]>
${extra}
]]></send>`;
  const sdp = loopbackSdp(rtpPort, { events: '0-16' });
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="callee-to-party">
<recv request="INVITE" timeout="30000"/>
${reply('180 Ringing', 'Content-Length: 0\n')}
${reply('200 OK', `Content-Type: application/sdp\nContent-Length: [len]\n\n${sdp}`).replace('<send>', '<send retrans="500">')}
<recv request="ACK"/>
${answerBye(byeTimeoutMs)}
</scenario>`;
}

/**
 * A queue call from sipp: a sipp UAS (its audio to `sinkPort`) that POST /v1.0/calls dials with a
 * queue_join flow, so the platform puts it in `queueId`; the sipp run (done when the platform hangs up).
 */
export async function queueCallFromSipp(app: Express, accesskey: string, queueId: string, sinkPort: number, source: string): Promise<{ done: Promise<SippResult> }> {
  const callerPort = await freePort();
  const uas = sipp(callerUas(sinkPort), ['-i', '127.0.0.1', '-p', String(callerPort), '-m', '1'], { killAfterMs: 60_000 });
  await sleep(300);
  const r = await request(app)
    .post('/v1.0/calls')
    .query({ accesskey })
    .send({
      source: { type: 'tel', target: source },
      destinations: [{ type: 'sip', target: `caller@127.0.0.1:${callerPort}` }],
      actions: [{ type: 'queue_join', option: { queue_id: queueId } }, { type: 'hangup' }],
    });
  if (r.status !== 200) throw new Error(`POST /v1.0/calls: ${r.status} ${JSON.stringify(r.body)}`);
  return uas;
}

/** The queuecall of `queueId` once it is in service (the agent answered). */
export function queuecallInService(db: Knex, queueId: string): Promise<QueuecallRow> {
  return until(
    async () => {
      const q = await db('queuecalls').where({ queue_id: queueId }).first();
      return q
        ? queuecallsRepo(db)
            .get(null, q.id)
            .then((x) => (x?.status === 'service' ? x : null))
        : null;
    },
    15_000,
    'queuecall in service',
  );
}
