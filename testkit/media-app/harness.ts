// The whole call plane on loopback for media-app tests: sip-server (its SipStack + drachtio layer,
// as sip-server/main.ts starts them) and a media-app node (startMediaApp, as media-app/main.ts does),
// on the per-process test Postgres and the test Redis with a fresh key prefix. sipp runs bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Redis } from 'ioredis';
import { makeSipConfig, type SipConfigInput } from '../../sip-config';
import { SipStack } from '../../sip-server/stack';
import { startDrachtio, type RunningDrachtio } from '../../sip-server/drachtio';
import { startCapture, type RunningCapture, type SipCaptureHook } from '../../sip-server/capture';
import { loadConfig, type Config } from '../../core/config';
import { eventStreamKey } from '../../core/events/bus';
import { tieEventStream } from '../event-stream';
import { repos } from '../../core/repos';
import { extensionsRepo, type ExtensionRow } from '../../core/repos/extensions';
import { ensureCustomerLabel, registrationDomain } from '../../core/extensions/domain';
import { loadMediaAppConfig } from '../../media-app/kit/config';
import { startMediaApp, type MediaApp } from '../../media-app/app';
import type { MediaServer } from '../../media-engine';
import { egressSettingsFromEnv, type EgressSettings } from '../../core/net';
import { startTestSwitch, type TestSwitch } from './switch';
import { freePort, portBlock, sippMediaPort } from '../ports';
import { TEST_JWT_SECRET } from '../api';
import { testDb, testDatabaseUrl } from '../db';
import { ack, ackFailure, bye, ok200 } from './sipp-steps';
import { loopbackSdp } from '../sdp';
import { sippResult, type SippResult } from '../sipp-process';

export const SECRET = 'media-app-test-secret';
export const SIP_DOMAIN = 'sip.test';

export interface Platform {
  sipPort: number;
  drachtioPort: number;
  stack: SipStack;
  drachtio: RunningDrachtio;
  app: MediaApp;
  config: Readonly<Config>;
  redis: Redis;
  /** The SIP capture, when the env said SIP_CAPTURE=on (off by default in tests). */
  capture: RunningCapture | null;
  /** Our switch, when media-app runs on the fsmrf backend (startPlatform's `mediaServer: 'fsmrf'`). */
  switch: TestSwitch | null;
  /** The embedded media engine (throws on the fsmrf backend, which has none). */
  engine(): MediaServer;
  close(): Promise<void>;
}

/** A random RTP range of 200 ports in this test process's share (the media engine skips ports in use). */
function rtpRange(): { min: number; max: number } {
  return portBlock('platformRtp', 200);
}

export interface SipServer {
  sipPort: number;
  drachtioPort: number;
  stack: SipStack;
  drachtio: RunningDrachtio;
}

/** sip-server on loopback (its SipStack + drachtio layer on free ports), as sip-server/main.ts starts them. */
/** `dnsServers`: RFC 3263 lookups go to these (a loopback DNS server) instead of the system's. */
/** `sip`: more sip-server settings (e.g. `listen.wsPort`, `tls`), merged over these; `capture`: the SIP ladder's hook. */
export async function startSipServer(logger: pino.Logger, secret = SECRET, dnsServers: string[] = [], sip: SipConfigInput = {}, capture?: SipCaptureHook): Promise<SipServer> {
  const sipPort = await freePort();
  const drachtioPort = await freePort();
  const stack = new SipStack(
    makeSipConfig({
      ...sip,
      listen: { host: '127.0.0.1', port: sipPort, transports: ['udp', 'tcp'], ...sip.listen },
      timers: { t1: 500, t2: 4000, t4: 5000 },
      drachtio: { host: '127.0.0.1', port: drachtioPort, secret },
      dns: { servers: dnsServers },
      // sipp is a scanner's favourite User-Agent; the test traffic is ours
      security: { uaBlocklist: [], allowlist: ['127.0.0.1'], ...sip.security },
    }),
    { logger, capture },
  );
  await stack.start();
  const drachtio = await startDrachtio(stack, { host: '127.0.0.1', port: drachtioPort, secret, logger });
  return { sipPort, drachtioPort, stack, drachtio };
}

/**
 * `log`: the platform's log lines (JSON, level info and up) also go there, for a test that reads them.
 * `mediaServer: 'fsmrf'`: media-app's calls on the fsmrf backend, against our switch (testkit/media-app/
 * switch.ts) with its SIP face on a sip-server of its own; MEDIA_SERVER names the switch's event socket.
 */
export async function startPlatform(env: Record<string, string> = {}, opts: { sip?: SipConfigInput; log?: NodeJS.WritableStream; mediaServer?: 'embedded' | 'fsmrf' } = {}): Promise<Platform> {
  const logger = opts.log ? pino({ level: 'info' }, opts.log) : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const sipDns = (env.SIP_DNS_SERVERS ?? '').split(',').filter(Boolean);
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run `source .data/env`');
  const keyPrefix = env.REDIS_KEY_PREFIX ?? `tma${process.pid}_${randomBytes(4).toString('hex')}:`;
  const capture = startCapture({ SIP_CAPTURE: 'off', ...env, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: keyPrefix }, logger);
  const { sipPort, drachtioPort, stack, drachtio } = await startSipServer(logger, SECRET, sipDns, opts.sip, capture?.capture);
  const dataDir = env.DATA_DIR ?? path.join(os.tmpdir(), `media-app-test-${process.pid}`);
  // the switch writes the platform's conference recordings (`conference … recording start <path>`) and
  // plays the announcement prompts media-app fetches for it: on the DATA_DIR they share, its own default
  // sounds directory is MEDIA_SERVER_PROMPTS_DIR's default (not lined up here: the defaults must agree)
  const shared = { recordingsDir: path.join(dataDir, 'recordings'), dataDir };
  const fsmrf = opts.mediaServer === 'fsmrf' ? await startSwitchBeside(logger, egressSettingsFromEnv({ ...env }), shared) : null;
  const db = await testDb();
  const range = rtpRange();
  const fullEnv = {
    DATABASE_URL: await testDatabaseUrl(),
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: keyPrefix,
    DATA_DIR: dataDir,
    SIP_DOMAIN,
    // one platform, one secret: the API's and media-app's (the AI keys sealed by one are opened by the other)
    JWT_SECRET: TEST_JWT_SECRET,
    DRACHTIO_HOST: '127.0.0.1',
    DRACHTIO_PORT: String(drachtioPort),
    DRACHTIO_SECRET: SECRET,
    MEDIA_APP_NODE_ID: `test-${process.pid}-${randomBytes(3).toString('hex')}`,
    RTP_PORT_MIN: String(range.min),
    RTP_PORT_MAX: String(range.max),
    MEDIA_WORKERS: '1',
    ...(fsmrf ? { MEDIA_SERVER: fsmrf.sw.mediaServer } : {}),
    ...env,
  } as NodeJS.ProcessEnv;
  const config = loadConfig(fullEnv, { persistSecret: false });
  const app = await startMediaApp({ config, app: loadMediaAppConfig(fullEnv), logger, db, connectTimeoutMs: 10_000 });
  const redis = new Redis(redisUrl);
  await tieEventStream(redis, eventStreamKey(config.redisKeyPrefix), 'end');
  return {
    sipPort,
    drachtioPort,
    stack,
    drachtio,
    app,
    config,
    redis,
    capture,
    switch: fsmrf?.sw ?? null,
    engine() {
      if (!app.engine) throw new Error('media-app runs on the fsmrf backend: there is no embedded engine');
      return app.engine;
    },
    async close() {
      await app.stop();
      await fsmrf?.close();
      await drachtio.close();
      await stack.stop();
      await capture?.close();
      redis.disconnect();
    },
  };
}

/** Our switch with its SIP face on a sip-server of its own; close() stops both (a cluster's node on fsmrf has one each: testkit/scale/cluster.ts). */
export async function startSwitchBeside(logger: pino.Logger, egress: EgressSettings, dirs: { recordingsDir: string; dataDir: string }): Promise<{ sw: TestSwitch; close(): Promise<void> }> {
  const face = await startSipServer(logger);
  try {
    const sw = await startTestSwitch({ sipPort: face.sipPort, drachtioPort: face.drachtioPort, secret: SECRET }, logger, egress, dirs);
    return {
      sw,
      async close() {
        await sw.stop();
        await face.drachtio.close();
        await face.stack.stop();
      },
    };
  } catch (e) {
    await face.drachtio.close();
    await face.stack.stop();
    throw e;
  }
}

let seq = 0;

/** A customer with an extension (random password) in its registration domain. */
export async function createExtension(customerId?: string, opts: { extension?: string; password?: string } = {}): Promise<{ customerId: string; ext: ExtensionRow; domain: string; password: string }> {
  const db = await testDb();
  const cid = customerId ?? (await repos(db).customers.create({ email: `ma${process.pid}-${++seq}@example.test`, status: 'active', name: 'ma' })).id;
  const domain = registrationDomain(await ensureCustomerLabel(db, cid), SIP_DOMAIN);
  const password = opts.password ?? 'pw' + randomBytes(8).toString('hex');
  const extension = opts.extension ?? `ext${++seq}${randomBytes(2).toString('hex')}`;
  const ext = await extensionsRepo(db).create({
    customer_id: cid,
    extension,
    domain_name: domain,
    username: extension,
    password,
    direct_hash: randomBytes(6).toString('hex'),
  });
  return { customerId: cid, ext, domain, password };
}

// ---- sipp ----

export type { SippResult };
const running = new Set<ChildProcess>();

/**
 * sipp with a scenario text, bounded in time, traces collected; killed after killAfterMs anyway.
 * Unless `args` name one (-mp), sipp's media ports come from sippMediaPort: sipp's default base (6000)
 * is shared by every sipp on the machine and it gives up after 100 tries ("Unable to bind audio RTP
 * socket", errno 98), so the 51st sipp alive at once never sent its INVITE.
 */
export function sipp(scenario: string, args: string[], opts: { killAfterMs?: number; files?: Record<string, string> } = {}): { done: Promise<SippResult>; port: Promise<number>; kill(): void } {
  const port = args.includes('-p') ? Promise.resolve(Number(args[args.indexOf('-p') + 1])) : freePort();
  const media = args.includes('-mp') ? Promise.resolve(null) : sippMediaPort();
  // and its remote-control socket: sipp tries UDP 8888-8947, and past 60 sipps alive it goes on without one, with an error line
  const control = args.includes('-cp') ? Promise.resolve(null) : freePort();
  const started = Promise.all([port, media, control]).then(([p, mp, cp]) => {
    const own = [...(args.includes('-p') ? [] : ['-p', String(p)]), ...(mp === null ? [] : ['-mp', String(mp)]), ...(cp === null ? [] : ['-cp', String(cp)])];
    return runSipp(scenario, [...args, ...own], opts);
  });
  // kill: SIGKILL, as a party that dies (no BYE; its RTP, sipp's own play_pcap_audio, stops with it)
  return { done: started.then((s) => s.done), port, kill: () => void started.then((s) => s.proc.kill('SIGKILL')) };
}

function runSipp(scenario: string, args: string[], opts: { killAfterMs?: number; files?: Record<string, string> }): { done: Promise<SippResult>; proc: ChildProcess } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ma-sipp-'));
  if (scenario) fs.writeFileSync(path.join(dir, 'scenario.xml'), scenario);
  for (const [name, text] of Object.entries(opts.files ?? {})) fs.writeFileSync(path.join(dir, name), text);
  // an empty scenario text means a built-in one (-sn) is in args
  const full = [...(scenario ? ['-sf', 'scenario.xml'] : []), ...args, '-nostdin', '-timeout_error', '-trace_err', '-trace_msg', '-message_file', 'messages.log'];
  if (!args.includes('-timeout')) full.push('-timeout', '20s');
  const proc = spawn('sipp', full, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  const done = sippResult(proc, dir, { killAfterMs: opts.killAfterMs, messages: true, onExit: () => running.delete(proc) });
  return { done, proc };
}

/**
 * ONE sipp placing a call per row of `fields` (its injection file: `[field0]`, `[field1]`… in the
 * scenario), `rate` calls a second. Many calls at once take one sipp, not one each: an idle sipp wakes
 * about every millisecond (epoll_wait with a 1 ms timeout, whatever -timer_resol says), and 100 of
 * them took 1.6 of this machine's two cores from the platform under test.
 */
export function sippCalls(
  scenario: string,
  target: string,
  fields: (string | number)[][],
  opts: { timeoutMs: number; killAfterMs?: number; rate?: number },
): { done: Promise<SippResult>; port: Promise<number> } {
  const n = String(fields.length);
  const inf = ['SEQUENTIAL', ...fields.map((f) => `${f.join(';')};`)].join('\n') + '\n';
  const args = [target, '-i', '127.0.0.1', '-inf', 'calls.csv', '-m', n, '-l', n, '-r', String(opts.rate ?? 50), '-timeout', `${Math.ceil(opts.timeoutMs / 1000)}s`];
  return sipp(scenario, args, { killAfterMs: opts.killAfterMs ?? opts.timeoutMs, files: { 'calls.csv': inf } });
}

export function killAllSipp(): void {
  for (const p of running) p.kill('SIGKILL');
  running.clear();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The polling wait (testkit/poll.ts), where most suites import it from. */
export { until } from '../poll';

// ---- a tiny SIP UDP client for precise protocol checks ----

export interface SipReply {
  status: number;
  headers: [string, string][];
  raw: string;
}

export class UdpSip {
  private sock = dgram.createSocket('udp4');
  port = 0;
  private waiters: ((r: SipReply) => void)[] = [];
  private queue: SipReply[] = [];

  static async open(): Promise<UdpSip> {
    const u = new UdpSip();
    await new Promise<void>((r) => u.sock.bind(0, '127.0.0.1', r));
    u.port = u.sock.address().port;
    u.sock.on('message', (buf) => {
      const raw = buf.toString();
      const m = /^SIP\/2\.0 (\d{3})/.exec(raw);
      if (!m) return;
      const status = Number(m[1]);
      if (status < 200) return;
      const headers = raw
        .split('\r\n\r\n')[0]!
        .split('\r\n')
        .slice(1)
        .map((l) => {
          const i = l.indexOf(':');
          return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
        });
      const r = { status, headers, raw };
      const w = u.waiters.shift();
      if (w) w(r);
      else u.queue.push(r);
    });
    return u;
  }

  /** Sends a request and resolves with the first final response (retransmits over 2 s). */
  async request(text: string, to: number): Promise<SipReply> {
    const buf = Buffer.from(text);
    const reply = new Promise<SipReply>((resolve, reject) => {
      const q = this.queue.shift();
      if (q) return resolve(q);
      const t = setTimeout(() => reject(new Error('no SIP reply')), 4000);
      this.waiters.push((r) => {
        clearTimeout(t);
        resolve(r);
      });
    });
    let n = 0;
    const resend = setInterval(() => (++n < 4 ? this.sock.send(buf, to, '127.0.0.1', () => undefined) : clearInterval(resend)), 500);
    this.sock.send(buf, to, '127.0.0.1');
    try {
      return await reply;
    } finally {
      clearInterval(resend);
    }
  }

  close(): void {
    this.sock.close();
  }
}

export { RtpSink } from './rtp-sink';

/**
 * A sipp UAC scenario: INVITE with our SDP (audio to `rtpPort`), then wait for the platform's BYE,
 * or, with `hangUpAfterMs`, hold the call that long and send the BYE itself.
 */
export function uacWaitsForBye(
  ruri: string,
  fromUser: string,
  /** the caller's RTP port, or a sipp field (`[field1]`) when one sipp places many calls from an -inf file */
  rtpPort: number | string,
  opts: { expectStatus?: number; digest?: boolean; /** scenario steps after the ACK (pauses, pcap plays) */ steps?: string; byeTimeoutMs?: number; hangUpAfterMs?: number } = {},
): string {
  const invite = (cseq = 1, auth = false) => `<send retrans="500"><![CDATA[
INVITE sip:${ruri} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: "Trunk Caller" <sip:${fromUser}@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:${ruri}>
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: <sip:${fromUser}@[local_ip]:[local_port]>
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Type: application/sdp
Content-Length: [len]

${loopbackSdp(rtpPort, { events: '0-15' })}
]]></send>`;
  if (opts.expectStatus) {
    return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="uac-rejected">
${invite()}
<recv response="100" optional="true"/>
<recv response="${opts.expectStatus}"/>
${ackFailure(`sip:${ruri}`, 1, 'new')}
</scenario>`;
  }
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="uac-waits-for-bye">
${invite()}
<recv response="100" optional="true"/>${
    opts.digest
      ? `
<recv response="407" auth="true"/>
${ackFailure(`sip:${ruri}`, 1)}
${invite(2, true)}
<recv response="100" optional="true"/>`
      : ''
  }
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true"/>
${ack(opts.digest ? 2 : 1)}
${opts.steps ? `${opts.steps}\n` : ''}${opts.hangUpAfterMs !== undefined ? callerBye(opts.hangUpAfterMs, opts.digest ? 3 : 2) : answerBye(opts.byeTimeoutMs ?? 20000)}
</scenario>`;
}

/** Scenario steps: wait for the platform's BYE and answer it 200. */
export const answerBye = (timeoutMs: number): string => `<recv request="BYE" timeout="${timeoutMs}"/>
${ok200}`;

const callerBye = (afterMs: number, cseq: number) => `<pause milliseconds="${afterMs}"/>
${bye(cseq)}`;

/** The events published for one resource, in order. */
export { eventsFor } from '../event-stream';

export { SIPP_SDP, answeringUas, register, registerOnly, type UasScenarioOptions } from './uas-scenarios';
