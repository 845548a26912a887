/**
 * Message-waiting lamp latency: sip-server and a media-app node (startPlatform, in this process) and
 * the control-api (its Express app on a loopback HTTP server, sharing the Redis prefix) on loopback.
 * BOXES extensions with a box each (unsolicited MWI on); the even ones' phones SUBSCRIBE to their
 * own `message-summary` (digest, raw UDP subscribers of testkit/pbx/subscriber.ts on a few sockets),
 * the odd ones' phones only REGISTER and get the unsolicited NOTIFY (media-app/voicemail/mwi-notifier.ts).
 *
 * - calls: CALLS sipp callers reach a box through a number whose flow runs `voicemail` and leave a
 *   short tone (the real path: greeting, beep, recording, row, notice); lamp on = the message row's
 *   tm_create → the phone's NOTIFY `Messages-Waiting: yes` with the new count.
 * - rounds: ROUNDS times, a new message row per box written by another "node" (its own Redis
 *   connection, the row then the notice, as media-app/voicemail/notify.ts does), spread over one
 *   second: row written → NOTIFY yes with the count.
 * - reads: after the calls and after each round, every new message marked read over REST
 *   (PUT /voicemail_messages/{id} folder old), spread over one second: PUT sent → NOTIFY no.
 *
 * Baselines in the same run: the PUT's own response time, and the bare Redis pub/sub round trip
 * (what any cross-process notice costs before SIP).
 *
 *   source .data/env && npx tsx scripts/bench/pbx/mwi-lamp.ts [--boxes 100] [--rounds 3] [--calls 4]
 */
process.env.LOG_LEVEL ??= 'silent';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { repos } from '../../../core/repos';
import { newId } from '../../../core/ids';
import { mwiChannel, parseMwiNotice, publishMwiChange } from '../../../core/voicemail/mwi';
import { buildTestApp } from '../../../testkit/api';
import { testDb } from '../../../testkit/db';
import { killAllSipp, sipp, startPlatform, uacWaitsForBye, type Platform } from '../../../testkit/media-app/harness';
import { sippMediaPort } from '../../../testkit/ports';
import { callerPcap, ToneSink } from '../../../testkit/pbx/audio';
import { Subscriber, type SipMessage } from '../../../testkit/pbx/subscriber';
import { extensionWithBox, numberWithFlow, pbxCustomer } from '../../../testkit/pbx/voicemail';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const BOXES = arg('boxes', 100);
const ROUNDS = arg('rounds', 3);
const CALLS = arg('calls', 4);
const SOCKETS = 4;
/** Concurrent sipp callers. */
const CALL_BATCH = 2;
if (!(
  Number.isInteger(BOXES) &&
  BOXES >= 2 &&
  BOXES <= 1000 &&
  Number.isInteger(ROUNDS) &&
  ROUNDS >= 0 &&
  ROUNDS <= 20 &&
  Number.isInteger(CALLS) &&
  CALLS >= 0 &&
  CALLS <= Math.min(20, BOXES) &&
  ROUNDS + CALLS > 0
)) {
  console.error('usage: mwi-lamp.ts [--boxes 2..1000] [--rounds 0..20] [--calls 0..min(20, boxes)] (rounds + calls > 0)');
  process.exit(2);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const now = () => performance.timeOrigin + performance.now();
const fmt = (xs: number[]) => (xs.length ? `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length})` : 'none');
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

type Mode = 'subscribed' | 'unsolicited';
type Phase = 'call' | 'new' | 'read';
interface Box {
  i: number;
  mode: Mode;
  boxId: string;
  /** Messages already read (the old count the next NOTIFY carries). */
  old: number;
  /** The message waiting to be read, if any. */
  unread: string | null;
  /** The NOTIFY this box's phone is waiting for: its body's state, when the change started (null: later, from the row). */
  pending: { key: string; phase: Phase; t0: number | null; at: number | null; noticeAt: number | null } | null;
}

function put(port: number, p: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'PUT', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function baseline(redisUrl: string, n: number): Promise<number[]> {
  const pub = new Redis(redisUrl);
  const sub = new Redis(redisUrl);
  const channel = `bench-mwi-baseline-${process.pid}`;
  const sent = new Map<string, number>();
  const lat: number[] = [];
  sub.on('message', (_c, m) => {
    const t = sent.get(m);
    if (t !== undefined) lat.push(now() - t);
  });
  await sub.subscribe(channel);
  for (let i = 0; i < n; i++) {
    const m = `m${i}`;
    sent.set(m, now());
    await pub.publish(channel, m);
    await sleep(1000 / BOXES);
  }
  await sleep(300);
  pub.disconnect();
  sub.disconnect();
  return lat;
}

type BoxRow = Awaited<ReturnType<typeof extensionWithBox>>;

/** What the run has measured: each lamp change's latency by phase and mode, the changes expected, NOTIFYs that matched nothing, the PUTs' own times. */
interface Tally {
  lat: Record<Phase, Record<Mode, number[]>>;
  expected: Record<Phase, number>;
  stray: number;
  restMs: number[];
  restFailed: number;
}

/** The bench's parts as set up: the platform, the API and its key, the customer, the boxes with their rows, the phones. */
interface Rig {
  p: Platform;
  apiPort: number;
  token: string;
  db: Knex;
  cid: string;
  tag: string;
  redisUrl: string;
  /** another node's Redis connection: its notices */
  other: Redis;
  boxes: Box[];
  rows: BoxRow[];
  subscribers: Subscriber[];
  tally: Tally;
}

const stateKey = (waiting: boolean, n: number, o: number) => `${waiting ? 'yes' : 'no'} ${n}/${o}`;

/** BOXES extensions with a box each (the even ones' phones subscribe, the odd ones' get unsolicited NOTIFYs), and the NOTIFY → box map by Message-Account. */
async function makeBoxes(cid: string, tag: string): Promise<{ boxes: Box[]; rows: BoxRow[]; byAccount: Map<string, Box> }> {
  const boxes: Box[] = [];
  const rows: BoxRow[] = [];
  const byAccount = new Map<string, Box>();
  for (let i = 0; i < BOXES; i++) {
    const e = await extensionWithBox(cid, { number: `7${tag}${String(i).padStart(4, '0')}`, pin: '2468', greeting_text: 'Message.' });
    const b: Box = { i, mode: i % 2 === 0 ? 'subscribed' : 'unsolicited', boxId: e.box.id, old: 0, unread: null, pending: null };
    boxes.push(b);
    rows.push(e);
    byAccount.set(`sip:${e.ext.extension}@${e.domain}`, b);
    byAccount.set(`sip:${e.ext.username}@${e.ext.domain_name}`, b);
  }
  return { boxes, rows, byAccount };
}

/** Each NOTIFY matched to the box whose change it ends: its latency kept (or its time, when the change's start comes later from the row), else counted stray. */
function onNotifyOf(byAccount: Map<string, Box>, tally: Tally): (m: SipMessage) => void {
  return (m) => {
    const account = /^Message-Account: (\S+)\r$/m.exec(m.body)?.[1];
    const waiting = /^Messages-Waiting: (yes|no)\r$/m.exec(m.body)?.[1];
    const vm = /^Voice-Message: (\d+)\/(\d+) /m.exec(m.body);
    const b = account ? byAccount.get(account) : undefined;
    const pend = b?.pending;
    if (!b || !pend || !waiting || !vm || `${waiting} ${vm[1]}/${vm[2]}` !== pend.key) return void tally.stray++;
    const at = now();
    if (pend.t0 !== null) tally.lat[pend.phase][b.mode].push(at - pend.t0);
    else pend.at = at;
    if (pend.t0 !== null) b.pending = null;
  };
}

/** When the notice of a called box is heard (splits a call's latency into row → notice → NOTIFY); the listener's close goes to `closers`. */
async function listenNotices(rig: Rig, closers: (() => void)[]): Promise<void> {
  const byBox = new Map(rig.boxes.map((b) => [b.boxId, b]));
  const listener = new Redis(rig.redisUrl);
  closers.push(() => listener.disconnect());
  listener.on('message', (_c: string, msg: string) => {
    const pend = byBox.get(parseMwiNotice(msg)?.box_id ?? '')?.pending;
    if (pend?.phase === 'call' && pend.noticeAt === null) pend.noticeAt = now();
  });
  await listener.subscribe(mwiChannel(rig.p.config.redisKeyPrefix));
}

/** The phones, 25 at a time: a subscribed box's phone SUBSCRIBEs on its socket, an unsolicited one's REGISTERs on the last socket. */
async function phonesUp(rig: Rig): Promise<void> {
  const { boxes, rows, subscribers } = rig;
  const registered = subscribers[SOCKETS]!;
  const t0 = now();
  let refused = 0;
  for (let i = 0; i < BOXES; i += 25) {
    await Promise.all(
      boxes.slice(i, i + 25).map(async (b) => {
        const e = rows[b.i]!;
        if (b.mode === 'subscribed') {
          const s = await subscribers[b.i % SOCKETS]!.subscribe({ user: e.ext.username, domain: e.domain, password: e.password, resource: e.ext.extension, event: 'message-summary', expires: 3600 });
          if (s.response.status >= 300) refused++;
        } else {
          const r = await registered.register({ user: e.ext.username, domain: e.domain, password: e.password, expires: 3600 });
          if (r.status !== 200) refused++;
        }
      }),
    );
  }
  await sleep(1000); // the initial NOTIFYs
  rig.tally.stray = 0;
  const subs = boxes.filter((b) => b.mode === 'subscribed').length;
  console.log(`phones: ${subs} subscribed, ${BOXES - subs} registered for unsolicited MWI, ${refused} refused, set up in ${((now() - t0) / 1000).toFixed(1)} s`);
}

/** Every unread message of `which` marked read over REST, spread over one second: PUT sent → NOTIFY no. */
async function readAll(rig: Rig, which: Box[]): Promise<void> {
  const { tally } = rig;
  for (const b of which) {
    if (!b.unread) continue;
    b.pending = { key: stateKey(false, 0, b.old + 1), phase: 'read', t0: now(), at: null, noticeAt: null };
    tally.expected.read++;
    const start = now();
    const status = await put(rig.apiPort, `/v1.0/voicemail_messages/${b.unread}?accesskey=${encodeURIComponent(rig.token)}`, '{"folder":"old"}');
    tally.restMs.push(now() - start);
    if (status !== 200) tally.restFailed++;
    b.old++;
    b.unread = null;
    await sleep(Math.max(0, 1000 / which.length - (now() - start)));
  }
  await sleep(2500);
  for (const b of which) b.pending = null;
}

/** One sipp caller leaves a message in box `b` through a number whose flow runs `voicemail`; false when sipp failed. */
async function leaveMessage(rig: Rig, b: Box, pcap: string): Promise<boolean> {
  const { p } = rig;
  const number = `+8997${rig.tag}${String(b.i).padStart(3, '0')}`;
  await numberWithFlow(rig.cid, number, [{ type: 'voicemail', option: { box_id: b.boxId } }, { type: 'hangup' }]);
  b.pending = { key: stateKey(true, 1, b.old), phase: 'call', t0: null, at: null, noticeAt: null };
  rig.tally.expected.call++;
  const sink = await ToneSink.open();
  try {
    const steps = `<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`;
    const r = await sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${p.sipPort}`, '15557654329', sink.port, { steps, byeTimeoutMs: 40_000 }),
      [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 60_000 },
    ).done;
    return r.code === 0;
  } finally {
    sink.close();
  }
}

/** (a) by the real path: sipp callers leave a message in the first CALLS boxes, CALL_BATCH at once; lamp on measured from each message row's tm_create; then read. */
async function callPhase(rig: Rig, dir: string): Promise<void> {
  const pcap = callerPcap(path.join(dir, 'caller.pcap'), 6000, [
    { atMs: 2000, tone: { hz: 1800, ms: 2500 } },
    { atMs: 5000, digit: '#' },
  ]);
  const called = rig.boxes.slice(0, CALLS);
  const toNotice: number[] = [];
  let failedCalls = 0;
  for (let i = 0; i < called.length; i += CALL_BATCH) {
    const ok = await Promise.all(called.slice(i, i + CALL_BATCH).map((b) => leaveMessage(rig, b, pcap)));
    failedCalls += ok.filter((x) => !x).length;
  }
  await sleep(2500);
  for (const b of called) {
    const m = (await rig.db('voicemail_messages').where({ box_id: b.boxId, folder: 'new' }).whereNull('tm_delete').first()) as { id: string; tm_create: Date } | undefined;
    if (m && b.pending?.at != null) rig.tally.lat.call[b.mode].push(b.pending.at - new Date(m.tm_create).getTime());
    if (m && b.pending?.noticeAt != null) toNotice.push(b.pending.noticeAt - new Date(m.tm_create).getTime());
    b.unread = m?.id ?? null;
    b.pending = null;
  }
  console.log(`calls: ${CALLS} placed, ${failedCalls} failed, ${called.filter((b) => b.unread).length} messages stored; row written (tm_create) → MWI notice heard: ${fmt(toNotice)}`);
  await readAll(rig, called);
}

/** (a) a new message row per box by another writer (the row, then the notice), spread over one second, (b) read over REST. */
async function newMessagesRound(rig: Rig): Promise<void> {
  const { boxes, db, cid } = rig;
  for (const b of boxes) {
    const start = now();
    const id = newId();
    await db('voicemail_messages').insert({
      id,
      customer_id: cid,
      box_id: b.boxId,
      folder: 'new',
      caller_number: '+15550001111',
      filename: `vm-bench-${id}.wav`,
      duration_ms: 1000,
      tm_create: new Date(),
    });
    b.pending = { key: stateKey(true, 1, b.old), phase: 'new', t0: now(), at: null, noticeAt: null };
    rig.tally.expected.new++;
    b.unread = id;
    await publishMwiChange(db, rig.other, rig.p.config.redisKeyPrefix, { id: b.boxId, customer_id: cid, extension_id: rig.rows[b.i]!.ext.id });
    await sleep(Math.max(0, 1000 / BOXES - (now() - start)));
  }
  await sleep(2500);
  for (const b of boxes) b.pending = null;
  await readAll(rig, boxes);
}

/** The lamp figures by phase and mode, the baselines (the PUT's own time, a bare Redis round trip), and the target's verdict. */
async function report(rig: Rig): Promise<void> {
  const { lat, expected } = rig.tally;
  const got = (ph: Phase) => lat[ph].subscribed.length + lat[ph].unsolicited.length;
  const line = (ph: Phase, what: string) => {
    console.log(`${what}: ${fmt([...lat[ph].subscribed, ...lat[ph].unsolicited])}; ${expected[ph] - got(ph)} missing`);
    console.log(`  subscribed ${fmt(lat[ph].subscribed)}; unsolicited ${fmt(lat[ph].unsolicited)}`);
  };
  if (CALLS > 0) line('call', 'lamp on, sipp message left: row written (tm_create) → NOTIFY yes');
  if (ROUNDS > 0) line('new', 'lamp on, row written by another node → NOTIFY yes');
  line('read', 'lamp off, REST PUT folder old sent → NOTIFY no');
  console.log(`unmatched NOTIFYs: ${rig.tally.stray}`);
  console.log(`baseline, the REST PUT's own time: ${fmt(rig.tally.restMs)}; ${rig.tally.restFailed} not 200`);
  const base = await baseline(rig.redisUrl, Math.max(100, expected.new + expected.read));
  console.log(`baseline, Redis publish → message: ${fmt(base)}`);
  const all = [...lat.call.subscribed, ...lat.call.unsolicited, ...lat.new.subscribed, ...lat.new.unsolicited, ...lat.read.subscribed, ...lat.read.unsolicited];
  const complete = all.length === expected.call + expected.new + expected.read;
  console.log(`all lamp changes: ${fmt(all)}; target p99 < 2 s: ${pct(all, 99) < 2000 && complete ? 'met' : 'NOT met'}`);
}

async function main(): Promise<void> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: source .data/env');
  console.log(`load average (1 min) at start: ${load()}`);
  const p = await startPlatform({ SUBSCRIBE_MAX_EXPIRES: '3600' });
  const api = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
  const server = http.createServer(api.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const apiPort = (server.address() as { port: number }).port;
  const other = new Redis(redisUrl);
  const subscribers: Subscriber[] = [];
  const closers: (() => void)[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mwi-bench-'));
  try {
    const db = await testDb();
    const cid = await pbxCustomer();
    const { token } = await repos(db).accesskeys.create({ customer_id: cid, name: 'mwi-bench' });
    for (let i = 0; i < SOCKETS + 1; i++) subscribers.push(await Subscriber.open(p.sipPort));
    const tag = `${process.pid % 1000}${Date.now() % 1000}`.padStart(6, '0');
    const { boxes, rows, byAccount } = await makeBoxes(cid, tag);
    const tally: Tally = {
      lat: { call: { subscribed: [], unsolicited: [] }, new: { subscribed: [], unsolicited: [] }, read: { subscribed: [], unsolicited: [] } },
      expected: { call: 0, new: 0, read: 0 },
      stray: 0,
      restMs: [],
      restFailed: 0,
    };
    const rig: Rig = { p, apiPort, token, db, cid, tag, redisUrl, other, boxes, rows, subscribers, tally };
    const onNotify = onNotifyOf(byAccount, tally);
    for (const s of subscribers) {
      s.keep = false;
      s.onNotify = onNotify;
    }
    await listenNotices(rig, closers);
    await phonesUp(rig);
    if (CALLS > 0) await callPhase(rig, dir);
    for (let round = 0; round < ROUNDS; round++) await newMessagesRound(rig);
    await report(rig);
    console.log(`load average (1 min) at end: ${load()}`);
  } finally {
    killAllSipp();
    for (const c of closers) c();
    for (const s of subscribers) s.close();
    other.disconnect();
    server.close();
    await api.close();
    await p.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
