/**
 * Mixed soak of the platform as the start command runs it (issue 52): sip-server, media-app and
 * control-api as supervised child processes (./processes.ts) on the test database and Redis, driven for
 * `seconds` by
 *   waves of calls into a talk flow, each wave's calls held a duration drawn between min and max
 *     (log-uniform, capped so they end before the soak does) and hung up by the caller,
 *   waves of callers into one conference (same durations),
 *   waves of AI calls: a flow running ai_talk with a speech-to-speech model on a stand-in of OpenAI's
 *     Realtime API, each caller speaking and hearing the agent (./soak-ai.ts; same durations),
 *   REGISTERs with digest of an extension,
 *   API reads and writes (list and get calls, list conferences, create and delete tags),
 * sampling RSS, live heap (after a forced collection: scripts/soak/probe.cjs) and open descriptors
 * of each process and timing every API request and call set-up (INVITE → 200, from sipp's trace).
 * The callers judge; scripts/soak/mixed.ts prints, and test/reliability/soak.test.ts holds a
 * 3-minute run to 0 unplanned hang-ups and bounded RSS.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseActions } from '../../core/flow';
import { repos } from '../../core/repos';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { trunksRepo } from '../../core/repos/trunks';
import { testDb, testDatabaseUrl } from '../db';
import { createExtension, registerOnly, RtpSink, sipp, sippCalls, uacWaitsForBye, type SippResult } from '../media-app/harness';
import { startPlatformProcesses, type PlatformProcesses } from './supervised';
import { sampleProcess, type Sample } from './sampler';
import { traceCalls } from './sipp-trace';
import type { RealtimeServer } from '../ai/realtime-server';
import { aiWaves, createAiNumber, speechUlaw, startAiStandIn, type AiCallCounts } from './soak-ai';
import { duration, every, sleep } from './soak-waves';

export interface SoakOptions {
  seconds: number;
  /** samples before this are warm-up: the RSS/descriptor comparison starts after it */
  warmupSeconds: number;
  /** p99 of API requests and call set-ups per window of this many seconds */
  windowSeconds: number;
  sampleSeconds: number;
  callWaveSeconds: number;
  callsPerWave: number;
  minCallSeconds: number;
  maxCallSeconds: number;
  conferenceWaveSeconds: number;
  conferenceParties: number;
  aiWaveSeconds: number;
  aiCallsPerWave: number;
  registerEverySeconds: number;
  apiRps: number;
  log?: (line: string) => void;
  /** stops the soak early: its processes stopped, runSoak rejects */
  signal?: AbortSignal;
}

export interface WindowStat {
  /** seconds from the start */
  from: number;
  apiCount: number;
  apiP99: number;
  setupCount: number;
  setupP99: number;
}

export interface ProcStat {
  name: string;
  /** RSS: the first sample after the warm-up against the last one under load */
  first: Sample;
  last: Sample;
  rssPct: number;
  /**
   * Descriptors: the sample before any load against the one after every call ended (under load they
   * follow the calls alive at that moment: a socket pair per media leg)
   */
  start: Sample;
  drained: Sample;
  fdsPct: number;
  /**
   * Live heap (after a collection) once every call ended against the first sample after the warm-up:
   * what calls leave behind, which RSS (the allocator keeps what it got) cannot tell from growth that settles
   */
  heapPct: number;
  restarts: number;
}

export interface CallCounts {
  placed: number;
  answered: number;
  /** ended by the platform (a BYE to the caller) or the caller's BYE refused: nobody asked for it */
  unplanned: number;
  /** one line per unplanned end: when, which call, why */
  why: string[];
}

export interface SoakResult {
  seconds: number;
  calls: CallCounts;
  conference: CallCounts;
  ai: AiCallCounts;
  registrations: { ok: number; failed: number };
  api: { requests: number; failed: number };
  /** call rows not `hangup` once every caller hung up */
  rowsLeft: number;
  windows: WindowStat[];
  procs: ProcStat[];
  samples: Record<string, Sample[]>;
}

const TALK = '+899200000001';
const PROBE = path.resolve(__dirname, '../../scripts/soak/probe.cjs');
const CONF = '+899200000002';

export function p99(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)]!;
}

async function account(): Promise<{ customerId: string; accesskey: string }> {
  const db = await testDb();
  const r = repos(db);
  const customer = await r.customers.create({ email: `soak${process.pid}-${Date.now()}@example.test`, email_verified: true, status: 'active', name: 'soak' });
  const { token } = await r.accesskeys.create({ customer_id: customer.id, name: 'soak' });
  await trunksRepo(db).create(customer.id, `soak${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  // one text (synthesised once, then from the TTS cache) said three times: longer than the longest call
  const talk = { type: 'talk', option: { text: 'The soak keeps this line busy with a long announcement. '.repeat(60), language: 'en-US' } };
  const flows = [
    [TALK, [{ type: 'answer' }, talk, talk, talk]],
    [CONF, [{ type: 'answer' }, { type: 'conference_join', option: { name: `soak-room-${process.pid}` } }]],
  ] as const;
  for (const [number, actions] of flows) {
    const flow = await flowsRepo(db).create({ customer_id: customer.id, actions: parseActions(actions as never) } as never);
    await numbersRepo(db).create({ customer_id: customer.id, number, type: 'virtual', call_flow_id: flow.id });
  }
  return { customerId: customer.id, accesskey: token };
}

export class Recorder {
  readonly api: { t: number; ms: number }[] = [];
  readonly setups: { t: number; ms: number }[] = [];
  readonly calls: CallCounts = { placed: 0, answered: 0, unplanned: 0, why: [] };
  readonly conference: CallCounts = { placed: 0, answered: 0, unplanned: 0, why: [] };
  readonly ai: AiCallCounts = { placed: 0, answered: 0, unplanned: 0, why: [], heard: 0, turns: 0 };
  constructor(readonly t0: number) {}

  /** What one wave's sipp lived through. */
  wave(r: SippResult, what: string, into: CallCounts, log?: (l: string) => void): void {
    for (const c of traceCalls(r.messages).values()) {
      into.placed++;
      if (c.answeredAt) {
        into.answered++;
        this.setups.push({ t: (c.inviteAt - this.t0) / 1000, ms: c.answeredAt - c.inviteAt });
      }
      if (c.byeFromPlatform || (c.ownByeSent && !c.ownByeAnswered) || !c.answeredAt) {
        into.unplanned++;
        const why = c.byeFromPlatform ? 'BYE from the platform' : c.answeredAt ? 'own BYE not answered' : `never answered (INVITE final status ${c.inviteStatus || 'none'})`;
        const at = new Date(c.inviteAt || Date.now()).toISOString();
        into.why.push(`${what} call ${c.callId} (INVITE at ${at}): ${why}`);
        log?.(`unplanned end of ${into.why.at(-1)}`);
      }
    }
  }

  windows(seconds: number, size: number): WindowStat[] {
    const out: WindowStat[] = [];
    for (let from = 0; from < seconds; from += size) {
      const inW = (x: { t: number }) => x.t >= from && x.t < from + size;
      const api = this.api.filter(inW).map((x) => x.ms);
      const setup = this.setups.filter(inW).map((x) => x.ms);
      out.push({ from, apiCount: api.length, apiP99: p99(api), setupCount: setup.length, setupP99: p99(setup) });
    }
    return out;
  }
}

/** API reads and writes at `rps` until `stop()`; each request's latency recorded. */
function apiLoad(pp: PlatformProcesses, accesskey: string, rps: number, rec: Recorder, counts: { requests: number; failed: number }): () => Promise<void> {
  let stopped = false;
  const q = `accesskey=${accesskey}`;
  const timed = async (url: string, init?: RequestInit): Promise<unknown> => {
    const started = performance.now();
    counts.requests++;
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
      const body = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.arrayBuffer();
      if (res.status >= 400) counts.failed++;
      return body;
    } catch {
      counts.failed++;
      return null;
    } finally {
      rec.api.push({ t: (Date.now() - rec.t0) / 1000, ms: performance.now() - started });
    }
  };
  const loop = (async () => {
    let lastCall = '';
    for (let i = 0; !stopped; i++) {
      const started = Date.now();
      const op = i % 5;
      if (op === 0) lastCall = ((await timed(`${pp.apiUrl}/calls?page_size=10&${q}`)) as { result?: { id: string }[] } | null)?.result?.[0]?.id ?? lastCall;
      else if (op === 1 && lastCall) await timed(`${pp.apiUrl}/calls/${lastCall}?${q}`);
      else if (op === 2) await timed(`${pp.apiUrl}/conferences?page_size=10&${q}`);
      else {
        const tag = (await timed(`${pp.apiUrl}/tags?${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `t${i}`, detail: 'soak' }) })) as {
          id?: string;
        } | null;
        if (tag?.id) await timed(`${pp.apiUrl}/tags/${tag.id}?${q}`, { method: 'DELETE' });
      }
      await sleep(Math.max(0, 1000 / rps - (Date.now() - started)));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

export interface Drivers {
  pp: PlatformProcesses;
  rec: Recorder;
  sink: RtpSink;
  o: SoakOptions;
  end: number;
}

/** Call waves (talk flow, or the conference) until `end`: each wave one sipp, its calls hung up by the caller. */
function callWaves(d: Drivers, number: string, everyS: number, perWave: number, into: CallCounts): Promise<void> {
  const target = `127.0.0.1:${d.pp.sipPort}`;
  return every(everyS, d.end, () => {
    const cap = (d.end - Date.now()) / 1000 - 2;
    if (cap < Math.min(5, d.o.minCallSeconds)) return null;
    const holdMs = Math.round(duration(d.o, cap) * 1000);
    const scenario = uacWaitsForBye(`${number}@${target}`, 'soak', '[field0]', { hangUpAfterMs: holdMs });
    const fields = Array.from({ length: perWave }, () => [d.sink.port]);
    return sippCalls(scenario, target, fields, { timeoutMs: holdMs + 40_000, rate: 5 }).done.then((r) => d.rec.wave(r, number === TALK ? 'talk' : 'conference', into, d.o.log));
  });
}

/** REGISTER with digest every `everyS` seconds until `end`. */
async function registrations(d: Drivers, customerId: string, counts: { ok: number; failed: number }): Promise<void> {
  const x = await createExtension(customerId);
  await every(d.o.registerEverySeconds, d.end, () =>
    sipp(registerOnly(x.ext.username, x.domain), [`127.0.0.1:${d.pp.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', x.ext.username, '-ap', x.password, '-timeout', '10s'], {
      killAfterMs: 15_000,
    }).done.then((r) => {
      if (r.code === 0) counts.ok++;
      else counts.failed++;
    }),
  );
}

function procStats(pp: PlatformProcesses, samples: Record<string, Sample[]>, warmupS: number, seconds: number): ProcStat[] {
  return Object.values(pp.procs).map((p) => {
    const s = samples[p.name]!;
    const first = s.find((x) => x.t >= warmupS) ?? s[0]!;
    const last = s.filter((x) => x.t <= seconds).at(-1)!;
    const [start, drained] = [s[0]!, s.at(-1)!];
    const pct = (a: number, b: number) => (a > 0 ? ((b - a) / a) * 100 : 0);
    return {
      name: p.name,
      first,
      last,
      rssPct: pct(first.rssMB, last.rssMB),
      start,
      drained,
      fdsPct: pct(start.fds, drained.fds),
      heapPct: pct(first.heapMB, drained.heapMB),
      restarts: p.runs - 1,
    };
  });
}

/**
 * The drained sample: once every call ended, the descriptors of each process back within 10 % (+3) of
 * what it held before the load and its heap measured (the probe) after the calls ended, or 40 s gone
 * (idle database connections close after 30 s: tarn's idle timeout of the knex pools).
 */
async function drainedSample(pp: PlatformProcesses, samples: Record<string, Sample[]>, sampleAll: () => void): Promise<void> {
  const ended = Date.now();
  const end = ended + 40_000;
  for (;;) {
    const before = Object.fromEntries(Object.entries(samples).map(([n, s]) => [n, s.length]));
    sampleAll();
    const back = Object.values(pp.procs).every((p) => {
      const s = samples[p.name]!;
      return s.length > before[p.name]! && s.at(-1)!.fds <= s[0]!.fds * 1.1 + 3 && s.at(-1)!.heapAt >= ended;
    });
    if (back || Date.now() > end) return;
    await sleep(2000);
    for (const [n, s] of Object.entries(samples)) s.length = before[n]!; // only the last try counts as drained
  }
}

/** Call rows of the customer not `hangup`, once none is left or 15 s gone. */
async function rowsLeftOf(customerId: string): Promise<number> {
  const db = await testDb();
  const left = async () => Number((await db('calls').where({ customer_id: customerId }).whereNot({ status: 'hangup' }).count({ n: 'id' }))[0]!.n);
  const until = Date.now() + 15_000;
  let rowsLeft = await left();
  while (rowsLeft && Date.now() < until) {
    await sleep(500);
    rowsLeft = await left();
  }
  return rowsLeft;
}

/** The load on a started platform: the account, the AI's number, every driver until the end, then the drain. */
async function drive(o: SoakOptions, pp: PlatformProcesses, sink: RtpSink, rt: RealtimeServer, dataDir: string): Promise<SoakResult> {
  const { customerId, accesskey } = await account();
  // the session cap well past the longest call: only the caller ends an AI call
  await createAiNumber(pp.apiUrl, accesskey, rt, o.maxCallSeconds + 120);
  const speech = speechUlaw('I would like to check my order, please.');
  const t0 = Date.now();
  const rec = new Recorder(t0);
  const d: Drivers = { pp, rec, sink, o, end: t0 + o.seconds * 1000 };
  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(pp.procs).map((n) => [n, []]));
  const sampleAll = () => {
    for (const p of Object.values(pp.procs)) {
      const s = p.pid ? sampleProcess(p.pid, (Date.now() - t0) / 1000, dataDir) : null;
      if (s) samples[p.name]!.push(s);
    }
  };
  sampleAll();
  const sampler = setInterval(sampleAll, o.sampleSeconds * 1000);
  const api = { requests: 0, failed: 0 };
  const regs = { ok: 0, failed: 0 };
  const stopApi = apiLoad(pp, accesskey, o.apiRps, rec, api);
  try {
    await Promise.all([
      callWaves(d, TALK, o.callWaveSeconds, o.callsPerWave, rec.calls),
      callWaves(d, CONF, o.conferenceWaveSeconds, o.conferenceParties, rec.conference),
      aiWaves(d, speech, rt, rec.ai),
      registrations(d, customerId, regs),
      sleep(o.seconds * 1000).then(stopApi),
    ]);
  } finally {
    clearInterval(sampler);
  }
  const rowsLeft = await rowsLeftOf(customerId);
  await drainedSample(pp, samples, sampleAll);
  const { calls, conference, ai } = rec;
  return {
    seconds: o.seconds,
    calls,
    conference,
    ai,
    registrations: regs,
    api,
    rowsLeft,
    windows: rec.windows(o.seconds, o.windowSeconds),
    procs: procStats(pp, samples, o.warmupSeconds, o.seconds),
    samples,
  };
}

/** Rejects once `signal` aborts (at once when it has). */
function abortion(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new Error(`soak stopped: ${String(signal?.reason ?? 'aborted')}`));
    if (signal?.aborted) fail();
    else signal?.addEventListener('abort', fail, { once: true });
  });
}

/**
 * The soak: the stand-in, the platform's processes, the load (drive). `o.signal` stops it early (the
 * CLI's SIGINT/SIGTERM): the platform's processes and the stand-in are stopped, the drivers left to the caller.
 */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: source .data/env');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'soak-mixed-'));
  const stand = await startAiStandIn();
  const stopStand = async () => {
    await stand.rt.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  // the probe: each process's live heap after a collection, every sample, in dataDir (sampleProcess reads it there)
  const pp = await startPlatformProcesses({
    databaseUrl: await testDatabaseUrl(),
    redisUrl,
    dataDir,
    nodeArgs: ['--expose-gc'],
    preload: [PROBE],
    env: { SIP_DIGEST_ALGORITHMS: 'MD5', SOAK_PROBE_DIR: dataDir, SOAK_PROBE_MS: String(o.sampleSeconds * 1000), ...stand.env },
  }).catch(async (e) => {
    await stopStand();
    throw e;
  });
  // the callers answer the platform's RTP with their own, as phones do (the media timeout ends a silent one)
  const sink = await RtpSink.open({ answer: true, many: true });
  const aborted = abortion(o.signal);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([drive(o, pp, sink, stand.rt, dataDir), aborted]);
  } finally {
    sink.close();
    await pp.stop();
    await stopStand();
  }
}
