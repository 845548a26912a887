// Floods against a running platform (issue 13, item 2), shared by test/reliability/floods.test.ts
// (bounded) and scripts/soak/floods.ts (long form). While `calls` sipp calls are up, each receiving
// the platform's RTP (a spoken prompt) at a counter on its own thread:
//   1. an INVITE flood at `floodRate`/s from 127.0.0.2 for `floodSeconds`;
//   2. a REGISTER brute force from 127.0.0.3 against one extension (wrong passwords, then the right
//      one while locked, then the right one after the lock ran out), and the same against an AOR
//      that does not exist, comparing the answers' shape.
// The report says how much RTP was lost, when the flooder was banned, and what every answer was.
import { Worker } from 'node:worker_threads';
import { parseActions } from '../../../core/flow';
import { repos } from '../../../core/repos';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { testDb } from '../../db';
import { sippMediaPort } from '../../ports';
import { bansSoFar, header, options, Peer, registerAttempt, shape, token } from './peer';
import { createExtension, sipp, sleep, startPlatform, uacWaitsForBye, until, type Platform } from '../../media-app/harness';

// ---- RTP counter on its own thread: the platform runs in this process, and a stalled main loop
// must not show up as packets "lost" in our own socket buffer ----

const COUNTER = `
const { parentPort } = require('node:worker_threads');
const dgram = require('node:dgram');
const s = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
const streams = new Map();
const buckets = new Map(); // 100 ms bucket -> packets
s.on('message', (b) => {
  if (b.length < 12 || (b[0] & 0xc0) !== 0x80) return;
  const now = Date.now();
  const seq = (b[2] << 8) | b[3];
  const ssrc = b.readUInt32BE(8);
  const k = Math.floor(now / 100);
  buckets.set(k, (buckets.get(k) || 0) + 1);
  let st = streams.get(ssrc);
  if (!st) { streams.set(ssrc, { n: 1, base: seq, max: seq, last: now, maxGap: 0, maxGapAt: 0 }); return; }
  st.n++;
  const d = (seq - (st.max & 0xffff) + 0x10000) & 0xffff;
  if (d > 0 && d < 0x8000) st.max += d;
  const gap = now - st.last;
  if (gap > st.maxGap) { st.maxGap = gap; st.maxGapAt = now; }
  st.last = now;
});
s.bind(0, '127.0.0.1', () => parentPort.postMessage({ port: s.address().port }));
parentPort.on('message', (m) => {
  if (m === 'stats') parentPort.postMessage({ streams: [...streams.values()], buckets: [...buckets.entries()] });
  else if (m === 'close') s.close(() => parentPort.close());
});
`;

export interface StreamStats {
  n: number;
  base: number;
  max: number;
  last: number;
  maxGap: number;
  maxGapAt: number;
}

export class RtpCounter {
  port = 0;
  private constructor(private readonly worker: Worker) {}

  static async open(): Promise<RtpCounter> {
    const w = new Worker(COUNTER, { eval: true });
    const c = new RtpCounter(w);
    c.port = await new Promise<number>((resolve, reject) => {
      w.once('message', (m: { port: number }) => resolve(m.port));
      w.once('error', reject);
    });
    return c;
  }

  stats(): Promise<{ streams: StreamStats[]; buckets: [number, number][] }> {
    return new Promise((resolve) => {
      this.worker.once('message', resolve);
      this.worker.postMessage('stats');
    });
  }

  async close(): Promise<void> {
    this.worker.postMessage('close');
    await new Promise((r) => setTimeout(r, 50));
    await this.worker.terminate();
  }
}

// ---- INVITE flooder on its own thread: it keeps its pace whatever the platform's loop does, and
// times the ban from the outside (the last INVITE that still got any answer) ----

const FLOODER = `
const { parentPort, workerData: o } = require('node:worker_threads');
const dgram = require('node:dgram');
const s = dgram.createSocket('udp4');
const sentAt = new Map();
let replies = 0, lastAnsweredSentAt = -1, sent = 0, probeAnswered = false;
s.on('message', (b) => {
  replies++;
  if (b.toString('latin1').includes('Call-ID: flood-probe')) probeAnswered = true;
  const m = /\\r\\nCall-ID: flood-(\\d+)-/i.exec(b.toString('latin1'));
  if (m) { const t = sentAt.get(Number(m[1])); if (t !== undefined && t > lastAnsweredSentAt) lastAnsweredSentAt = t; }
});
s.bind(0, o.host, async () => {
  const port = s.address().port;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const start = Date.now();
  parentPort.postMessage({ started: start });
  const perTick = Math.max(1, Math.round(o.rate / 100));
  for (let i = 0; i < o.seconds * 100; i++) {
    const due = start + i * 10;
    if (due > Date.now()) await sleep(due - Date.now());
    for (let j = 0; j < perTick; j++) {
      const n = sent++;
      sentAt.set(n, Date.now() - start);
      const t = n + '-' + Math.random().toString(36).slice(2);
      s.send([
        'INVITE sip:' + o.number + '@127.0.0.1:' + o.port + ' SIP/2.0', 'Via: SIP/2.0/UDP ' + o.host + ':' + port + ';branch=z9hG4bKfl' + t,
        'Max-Forwards: 70', 'From: <sip:flood@' + o.host + '>;tag=' + t, 'To: <sip:' + o.number + '@127.0.0.1>', 'Call-ID: flood-' + t,
        'CSeq: 1 INVITE', 'Contact: <sip:flood@' + o.host + ':' + port + '>', 'Content-Length: 0', '', ''].join('\\r\\n'), o.port, '127.0.0.1');
    }
  }
  const ms = Date.now() - start;
  await sleep(o.graceMs);
  // is the flooding address:port still answered? (an OPTIONS from the same socket, retransmitted)
  const probe = [
    'OPTIONS sip:ping@127.0.0.1:' + o.port + ' SIP/2.0', 'Via: SIP/2.0/UDP ' + o.host + ':' + port + ';branch=z9hG4bKprobe' + Date.now() + ';rport',
    'Max-Forwards: 70', 'From: <sip:probe@' + o.host + '>;tag=probe', 'To: <sip:ping@127.0.0.1>', 'Call-ID: flood-probe', 'CSeq: 1 OPTIONS',
    'Content-Length: 0', '', ''].join('\\r\\n');
  for (let i = 0; i < 3 && !probeAnswered; i++) { s.send(probe, o.port, '127.0.0.1'); await sleep(400); }
  s.close();
  parentPort.postMessage({ sent, ms, replies, lastAnsweredSentAt, probeAnswered });
});
`;

export interface FloodResult {
  started: number;
  sent: number;
  ms: number;
  replies: number;
  lastAnsweredSentAt: number;
  probeAnswered: boolean;
}

/** Floods `rate` INVITE/s from `host` for `seconds`; resolves after a grace time for late answers. */
export function floodInvites(o: { host: string; port: number; number: string; rate: number; seconds: number; graceMs: number }): { started: Promise<number>; done: Promise<FloodResult> } {
  const w = new Worker(FLOODER, { eval: true, workerData: o });
  let started!: (n: number) => void;
  const startedP = new Promise<number>((r) => (started = r));
  const done = new Promise<FloodResult>((resolve, reject) => {
    let t0 = 0;
    w.on('message', (m: { started?: number } & Partial<FloodResult>) => {
      if (m.started) {
        t0 = m.started;
        started(t0);
      } else {
        void w.terminate();
        resolve({ ...(m as FloodResult), started: t0 });
      }
    });
    w.once('error', reject);
  });
  return { started: startedP, done };
}

// ---- the run ----

export interface FloodOptions {
  calls: number;
  floodRate: number;
  floodSeconds: number;
  /** wrong passwords tried against the extension */
  attempts: number;
  lockoutFailures: number;
  lockoutSec: number;
  /** extra platform environment (e.g. a wider RTP_PORT_MIN/MAX for more calls) */
  platformEnv?: Record<string, string>;
  log?: (s: string) => void;
}

export interface FloodReport {
  /** calls in the media-app's live map when all RTP streams had started */
  callsUp: number;
  rtp: { streams: number; received: number; expected: number; lossPct: number; maxGapMs: number; duringFlood: { received: number; expected: number; pct: number } };
  flood: {
    sent: number;
    ms: number;
    /** every answer the flooder got, retransmitted finals of transactions begun before the ban included */
    repliesReceived: number;
    /** the ban as the stack counted it (sip_bans_total), from the first INVITE */
    bannedAfterMs: number | null;
    /** when the last INVITE that got any answer was sent: the ban as the flooder sees it */
    lastAnsweredSentAtMs: number;
    /** an OPTIONS from the flooding socket itself, after the flood */
    probeFromFlooderAnswered: boolean;
    /** an OPTIONS from another port of the flooder's address (another phone behind its NAT) */
    probeFromFlooderAddressOtherPortAnswered: boolean;
    probeFromOtherAnswered: boolean;
  };
  bruteForce: {
    statuses: { status: number; retryAfter?: string }[];
    rightPasswordWhileLocked: { status?: number; retryAfter?: string };
    rightPasswordAfterLock: number | undefined;
    unknownAorLocked: { status?: number; retryAfter?: string };
  };
  /** answers to an existing extension with a wrong password vs an unknown user, side by side */
  shapes: { existing: { challenge: string; final: string }; unknown: { challenge: string; final: string } };
  sipp: { code: number | null; errors: string };
  ms: number;
}

function uacScenario(number: string, sipPort: number, rtpPort: number, holdMs: number): string {
  return uacWaitsForBye(`${number}@127.0.0.1:${sipPort}`, '+15551230000', rtpPort, { hangUpAfterMs: holdMs });
}

/** A customer with a trunk by address, a number whose flow talks then holds the line, and an extension to guess at. */
async function floodTargets(): Promise<{ number: string; target: Awaited<ReturnType<typeof createExtension>> }> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `flood${Date.now()}${token()}@example.test`, status: 'active', name: 'flood' })).id;
  await trunksRepo(db).create(cid, `fl${token()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const text = 'This call carries audio while the platform is under attack. '.repeat(12);
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'talk', option: { text, language: 'en-US' } }, { type: 'sleep', option: { duration: 120_000 } }]),
  } as never);
  const number = `+8991${String(Date.now()).slice(-8)}`;
  await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
  return { number, target: await createExtension(cid) };
}

/** The calls up through the attacks, their RTP to the counter; resolves once every stream has started. */
async function callLoad(o: FloodOptions, p: Platform, counter: RtpCounter, number: string) {
  // the phase budget decides how long the calls are held
  const holdMs = 4000 + o.floodSeconds * 1000 + 2000 + o.attempts * 120 + o.lockoutSec * 1000 + 5000;
  const rate = Math.min(o.calls, 25);
  const load = sipp(
    uacScenario(number, p.sipPort, counter.port, holdMs),
    [
      `127.0.0.1:${p.sipPort}`,
      '-i',
      '127.0.0.1',
      '-m',
      String(o.calls),
      '-l',
      String(o.calls),
      '-r',
      String(rate),
      '-mp',
      String(await sippMediaPort()),
      '-timeout',
      `${Math.ceil(holdMs / 1000) + 40}s`,
    ],
    { killAfterMs: holdMs + 60_000 },
  );
  await until(async () => (await counter.stats()).streams.length >= o.calls, 20_000 + o.calls * 200, `${o.calls} RTP streams`);
  return load;
}

/** 1. The INVITE flood from one source, the ban timed by the stack's counter; then OPTIONS probes from another port of its address and from another address. */
async function inviteFloodPhase(o: FloodOptions, p: Platform, peers: Peer[]) {
  const bansBefore = await bansSoFar();
  let bannedAt: number | null = null;
  const poll = setInterval(() => {
    void bansSoFar().then((n) => {
      if (n > bansBefore && bannedAt === null) bannedAt = Date.now();
    });
  }, 25);
  const flood = floodInvites({ host: '127.0.0.2', port: p.sipPort, number: '+899199999999', rate: o.floodRate, seconds: o.floodSeconds, graceMs: 1000 });
  const floodStart = await flood.started;
  const fr = await flood.done.finally(() => clearInterval(poll));
  // the ban is per address:port: another device behind the flooder's address (a NAT) is still served
  const flooderAddress = await new Peer('127.0.0.2', p.sipPort).open();
  peers.push(flooderAddress);
  const probeFlooderAddress = await flooderAddress.request(options(flooderAddress, p.sipPort), 3000);
  const other = await new Peer('127.0.0.4', p.sipPort).open();
  peers.push(other);
  const probeOther = await other.request(options(other, p.sipPort), 3000);
  const bannedAfterMs = bannedAt === null ? null : (bannedAt as number) - floodStart;
  o.log?.(`flood: ${fr.sent} INVITEs in ${fr.ms} ms, banned after ${bannedAfterMs} ms, last answered INVITE sent at ${fr.lastAnsweredSentAt} ms`);
  const report: FloodReport['flood'] = {
    sent: fr.sent,
    ms: fr.ms,
    repliesReceived: fr.replies,
    bannedAfterMs,
    lastAnsweredSentAtMs: fr.lastAnsweredSentAt,
    probeFromFlooderAnswered: fr.probeAnswered,
    probeFromFlooderAddressOtherPortAnswered: probeFlooderAddress?.status === 200,
    probeFromOtherAnswered: probeOther?.status === 200,
  };
  return { report, floodStart, floodEnd: floodStart + fr.ms };
}

const finalOf = (a: Awaited<ReturnType<typeof registerAttempt>>): { status?: number; retryAfter?: string } => ({
  status: a.final?.status,
  retryAfter: a.final ? header(a.final, 'retry-after') : undefined,
});

/**
 * 2. The REGISTER brute force from another source: wrong passwords against the extension, the right one
 * while locked and after the lock ran out, and the same against an AOR that does not exist.
 */
async function bruteForcePhase(o: FloodOptions, p: Platform, target: { ext: { extension: string }; domain: string; password: string }, peers: Peer[]) {
  const cracker = await new Peer('127.0.0.3', p.sipPort).open();
  peers.push(cracker);
  const user = target.ext.extension;
  const domain = target.domain;
  // the same questions about an extension that exists and one that does not
  const existing = await registerAttempt(cracker, p.sipPort, user, domain, 'wrong-0');
  const ghost = `ghost${token()}`;
  const unknown = await registerAttempt(cracker, p.sipPort, ghost, domain, 'wrong-0');
  const statuses: { status: number; retryAfter?: string }[] = [];
  // paced at ~20 attempts/s (40 requests/s): under the per-source rate limit, so that what stops
  // the guessing is the lock of the AOR, not the flood ban (a faster cracker is banned as a flooder)
  for (let i = 1; i < o.attempts; i++) {
    await sleep(50);
    const a = await registerAttempt(cracker, p.sipPort, user, domain, `wrong-${i}`);
    statuses.push({ status: a.final?.status ?? 0, retryAfter: a.final ? header(a.final, 'retry-after') : undefined });
  }
  const locked = await registerAttempt(cracker, p.sipPort, user, domain, target.password);
  for (let i = 1; i < o.lockoutFailures; i++) await registerAttempt(cracker, p.sipPort, ghost, domain, `wrong-${i}`);
  const ghostLocked = await registerAttempt(cracker, p.sipPort, ghost, domain, `wrong-x`);
  const lockEnds = Date.now() + (Number(locked.final ? header(locked.final, 'retry-after') : 0) || o.lockoutSec) * 1000 + 300;
  await sleep(Math.max(0, lockEnds - Date.now()));
  const after = await registerAttempt(cracker, p.sipPort, user, domain, target.password);
  o.log?.(`brute force: ${statuses.map((s) => s.status).join(',')}; after the lock: ${after.final?.status}`);
  const bruteForce: FloodReport['bruteForce'] = { statuses, rightPasswordWhileLocked: finalOf(locked), rightPasswordAfterLock: after.final?.status, unknownAorLocked: finalOf(ghostLocked) };
  const shapes: FloodReport['shapes'] = {
    existing: { challenge: shape(existing.challenge), final: shape(existing.final) },
    unknown: { challenge: shape(unknown.challenge), final: shape(unknown.final) },
  };
  return { bruteForce, shapes };
}

/** Audio: per stream, packets received against the sequence numbers sent; and the packets of the flood's whole 100 ms buckets against 5 per stream each. */
function audioFigures(st: { streams: StreamStats[]; buckets: [number, number][] }, floodStart: number, floodEnd: number): FloodReport['rtp'] {
  const received = st.streams.reduce((a, s) => a + s.n, 0);
  const expected = st.streams.reduce((a, s) => a + (s.max - s.base + 1), 0);
  const inFlood = st.buckets.filter(([k]) => k * 100 >= floodStart && (k + 1) * 100 <= floodEnd).reduce((a, [, n]) => a + n, 0);
  const floodBuckets = st.buckets.filter(([k]) => k * 100 >= floodStart && (k + 1) * 100 <= floodEnd).length;
  const floodExpected = st.streams.length * floodBuckets * 5; // 5 packets per stream per 100 ms
  return {
    streams: st.streams.length,
    received,
    expected,
    lossPct: expected ? Math.round((1 - received / expected) * 10000) / 100 : 100,
    maxGapMs: Math.max(0, ...st.streams.map((s) => s.maxGap)),
    duringFlood: { received: inFlood, expected: floodExpected, pct: floodExpected ? Math.round((inFlood / floodExpected) * 1000) / 10 : 0 },
  };
}

export async function runFloods(o: FloodOptions): Promise<FloodReport> {
  const t0 = Date.now();
  const p: Platform = await startPlatform({
    REGISTRAR_LOCKOUT_FAILURES: String(o.lockoutFailures),
    REGISTRAR_LOCKOUT_WINDOW_SEC: '120',
    REGISTRAR_LOCKOUT_SEC: String(o.lockoutSec),
    MEDIA_WORKERS: '2',
    ...o.platformEnv,
  });
  const counter = await RtpCounter.open();
  const peers: Peer[] = [];
  try {
    const { number, target } = await floodTargets();
    const load = await callLoad(o, p, counter, number);
    const callsUp = p.app.calls.size;
    o.log?.(`${callsUp} calls up after ${Date.now() - t0} ms`);
    await sleep(1500); // a baseline of audio before the attacks
    const flood = await inviteFloodPhase(o, p, peers);
    const { bruteForce, shapes } = await bruteForcePhase(o, p, target, peers);
    const rtp = audioFigures(await counter.stats(), flood.floodStart, flood.floodEnd);
    const res = await load.done;
    return { callsUp, rtp, flood: flood.report, bruteForce, shapes, sipp: { code: res.code, errors: res.errors.slice(0, 2000) }, ms: Date.now() - t0 };
  } finally {
    for (const x of peers) x.close();
    await counter.close();
    await p.close();
  }
}
