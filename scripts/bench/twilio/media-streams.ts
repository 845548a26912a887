/**
 * Twilio Media Streams benchmark: the call plane on loopback (sip-server + media-app node) in a process
 * of its own (scripts/bench/ai/platform-process.ts), one sipp placing N calls (50 a second) whose flow is
 * `<Connect><Stream>` (external_media_start encapsulation twilio, wait) to one `ws` server of ours;
 * each far end talks a PCMU tone. The harness (sipp control, the RTP peers, the ws server: the
 * "agent") runs in this process, so that its work is not counted as the platform's.
 *   source .data/env && npx tsx scripts/bench/twilio/media-streams.ts [--calls 50 | --calls 100,200] [--seconds 10] [--rounds 4] [--rt-priority 10] [--cpu-prof dir]
 * 1. loss: over a window, the RTP packets each caller got from the platform and the `media` messages
 *    each stream got (both should be 50 a second), and the CPU of the platform's process (its node
 *    main thread and its media worker apart) and of this one.
 * 2. first audio out: the server sends 300 ms of tone on every stream at once; the time until the
 *    caller's first voiced RTP packet (baseline in the same run: the RTP path alone, the gap between
 *    the caller's packets, i.e. what one 20 ms frame of the call's clock costs). --rounds times (4),
 *    1.5 s apart: the first round (the streams' first playback, cold code) apart, the rest pooled.
 * 3. clear → silence: the server queues 5 s of tone on every stream, after 1 s sends `clear`; the time
 *    until the caller hears only silence.
 * The load average (1 min) is sampled through the run and printed with the figures. `--cpu-prof dir`:
 * the platform's process writes a V8 CPU profile there as it closes (scripts/bench/profile-top.ts reads it).
 * Writes dist/bench/twilio-media-streams-<calls>.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
process.env.LOG_LEVEL ??= 'silent';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { parseActions } from '../../../core/flow';
import { repos } from '../../../core/repos';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { trunksRepo } from '../../../core/repos/trunks';
import { pcmToMulawBase64 } from '../../../core/streams/twilio';
import { callSid } from '../../../core/twilio/sids';
import { testDb, truncateAll } from '../../../testkit/db';
import { killAllSipp, sippCalls, sleep, uacWaitsForBye, until, type SippResult } from '../../../testkit/media-app/harness';
import { pcmBuffer, RtpPeer, tone } from '../../../testkit/streams/support';
import { twilioApp, type TwilioConn } from '../../../testkit/streams/twilio';
import { portBlock } from '../../../testkit/ports';
import { procStat } from '../../../media-engine/worker/proc-stat';
import { startPlatformProcess, type PlatformProcess } from '../ai/platform-process';
import type { LiveCall, LoopDelay, PlatformAsk, Threads } from './platform-calls';
import { reportPath } from '../report';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
/** --calls 100,200: one run per count, each with a fresh platform process, one after another */
const COUNTS = arg('calls', '50').split(',').map(Number);
const SECONDS = Number(arg('seconds', '10'));
const ROUNDS = Math.max(2, Number(arg('rounds', '4')));
/** --rt-priority N: the media worker on SCHED_RR (MEDIA_WORKER_RT_PRIORITY, as an operator may set it) */
const RT = arg('rt-priority', '');
/** --cpu-prof dir: a CPU profile of the platform's process */
const PROF = arg('cpu-prof', '');

interface PlacedCall {
  callId: string;
  peer: RtpPeer;
}

const ask = <T>(p: PlatformProcess, a: PlatformAsk) => p.request<T>(a);

/**
 * One sipp (as the customer's trunk, harness sippCalls) places a call to each of `numbers` (at `rate`
 * a second), each offering its own RTP peer's port; resolves once each of the platform's calls
 * progresses, its peer talking to it.
 */
async function placeCalls(p: PlatformProcess, numbers: string[], rate = 50): Promise<{ calls: PlacedCall[]; sipp: Promise<SippResult> }> {
  const peers = await Promise.all(numbers.map(() => RtpPeer.open()));
  const scenario = uacWaitsForBye(`[field0]@127.0.0.1:${p.sipPort}`, '+15551230000', '[field1]', { byeTimeoutMs: 600_000 });
  const run = sippCalls(
    scenario,
    `127.0.0.1:${p.sipPort}`,
    numbers.map((n, i) => [n, peers[i]!.port]),
    { rate, timeoutMs: 600_000 },
  );
  const ended = run.done.then((r): never => {
    throw new Error(`sipp ended (exit ${r.code}) before every call progressed: ${(r.errors || r.stderr).trim().slice(0, 400)}`);
  });
  try {
    const calls = await Promise.race([
      Promise.all(
        numbers.map(async (number, i) => {
          const live = await ask<LiveCall>(p, { op: 'call', number, timeoutMs: 60_000 });
          peers[i]!.talk(live.rtpPort);
          return { callId: live.callId, peer: peers[i]! };
        }),
      ),
      ended,
    ]);
    return { calls, sipp: run.done };
  } catch (e) {
    for (const peer of peers) peer.close();
    throw e;
  }
}

/** A customer with a trunk that lets sipp in, and `n` numbers whose flow streams to `url`. */
async function numbers(url: string, n: number): Promise<string[]> {
  const db = await testDb();
  const cid = (await repos(db).customers.create({ email: `ms${Date.now()}@example.test`, status: 'active', name: 'bench' })).id;
  await trunksRepo(db).create(cid, `ms${Date.now()}`, { name: 't', detail: '', auth_types: ['ip'], username: '', password: '', allowed_ips: ['127.0.0.1/32'] });
  const flow = await flowsRepo(db).create({
    customer_id: cid,
    actions: parseActions([{ type: 'answer' }, { type: 'external_media_start', option: { url, encapsulation: 'twilio', wait: true } }, { type: 'hangup' }]),
  } as never);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const number = `+8998${String(process.pid % 1000).padStart(3, '0')}${String(i).padStart(5, '0')}`;
    await numbersRepo(db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: flow.id });
    out.push(number);
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const payload = (frames: number) => pcmToMulawBase64(Buffer.concat(Array.from({ length: frames }, (_, n) => pcmBuffer(tone(n, 500)))));

/** Arrival of the first voiced packet after `from`, or NaN. */
function firstVoiced(c: PlacedCall, from: number): number {
  for (let i = 0; i < c.peer.levels.length; i++) if (c.peer.arrivals[i]! > from && c.peer.levels[i]! > 300) return c.peer.arrivals[i]!;
  return NaN;
}

/** Arrival of the first packet after `from` from which on the caller hears only silence, or NaN. */
function silenceFrom(c: PlacedCall, from: number): number {
  const { levels, arrivals } = c.peer;
  let j = levels.length;
  while (j > 0 && levels[j - 1]! <= 300 && arrivals[j - 1]! > from) j--;
  return j < levels.length && arrivals[j]! > from ? arrivals[j]! : NaN;
}

/** What the loss window measured: its length, the RTP and `media` counts per stream, the RTP gaps, and the CPU and loop delays over it. */
interface LossWindow {
  ms: number;
  rtpGot: number[];
  mediaGot: number[];
  gaps: number[];
  /** CPU ms over the window: the platform's process, its node main thread, its media worker; this process */
  cpu: { all: number; main: number; worker: number; harness: number };
  loop: LoopDelay;
  /** this process's event-loop delay, from the window's start on (read when the report is written) */
  harnessLoop: IntervalHistogram;
}

/** The calls whose stream started (a stream that could not connect ends its call: said in the report), with their connections. */
async function streamsUp(app: { conns: TwilioConn[] }, calls: PlacedCall[], count: number): Promise<{ streamed: PlacedCall[]; conns: TwilioConn[] }> {
  await until(() => app.conns.filter((c) => c.of('start').length).length === count, 60_000, 'every stream started').catch(() => undefined);
  const connOf = new Map<string, TwilioConn>();
  for (const c of app.conns) if (c.of('start').length) connOf.set(String((c.of('start')[0]!.start as { callSid: string }).callSid), c);
  const streamed = calls.filter((c) => connOf.has(callSid(c.callId)));
  return { streamed, conns: streamed.map((c) => connOf.get(callSid(c.callId))!) };
}

/** 1. Loss over SECONDS; the CPU of the platform's process (whole, its node main thread, its media worker) and of this one. */
async function lossWindow(platform: PlatformProcess, streamed: PlacedCall[], conns: TwilioConn[]): Promise<LossWindow> {
  const { pid, workerTids } = await ask<Threads>(platform, { op: 'threads' });
  const cpuOf = () => ({ all: procStat(pid).cpuMs, main: procStat(pid, pid).cpuMs, worker: workerTids.reduce((n, t) => n + procStat(pid, t).cpuMs, 0) });
  const cpu0 = cpuOf();
  const harness0 = process.cpuUsage();
  const harnessLoop = monitorEventLoopDelay({ resolution: 5 });
  harnessLoop.enable();
  await ask<LoopDelay>(platform, { op: 'loop', reset: true });
  const from = performance.now();
  const media0 = conns.map((c) => c.mediaCount);
  const rtp0 = streamed.map((c) => c.peer.arrivals.length);
  await sleep(SECONDS * 1000);
  const ms = performance.now() - from;
  const cpu1 = cpuOf();
  const harnessCpu = process.cpuUsage(harness0);
  const loop = await ask<LoopDelay>(platform, { op: 'loop', reset: true });
  const gaps: number[] = [];
  for (const c of streamed) {
    const xs = c.peer.arrivals.filter((t) => t >= from && t <= from + ms);
    for (let i = 1; i < xs.length; i++) gaps.push(xs[i]! - xs[i - 1]!);
  }
  return {
    ms,
    rtpGot: streamed.map((c, i) => c.peer.arrivals.length - rtp0[i]!),
    mediaGot: conns.map((c, i) => c.mediaCount - media0[i]!),
    gaps,
    cpu: { all: cpu1.all - cpu0.all, main: cpu1.main - cpu0.main, worker: cpu1.worker - cpu0.worker, harness: (harnessCpu.user + harnessCpu.system) / 1000 },
    loop,
    harnessLoop,
  };
}

/**
 * 2. First audio out, in ROUNDS rounds 1.5 s apart: the first is the process's first playback on these
 * streams (cold code paths), reported apart; the others pooled.
 */
async function firstAudioRounds(streamed: PlacedCall[], conns: TwilioConn[]): Promise<{ firstAudio: number[]; cold: number[]; perRound: string }> {
  const tone300 = payload(15);
  const rounds: number[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const sentAt = conns.map((c) => {
      c.send({ event: 'media', media: { payload: tone300 } });
      return performance.now();
    });
    await sleep(1500);
    rounds.push(streamed.map((c, i) => firstVoiced(c, sentAt[i]!) - sentAt[i]!));
  }
  const perRound = rounds
    .map((xs) =>
      pct(
        xs.filter((x) => !Number.isNaN(x)),
        99,
      ).toFixed(0),
    )
    .join(', ');
  return { firstAudio: rounds.slice(1).flat(), cold: rounds[0]!.filter((x) => !Number.isNaN(x)), perRound };
}

/** 3. Clear → silence: 5 s of tone queued on every stream, `clear` after 1 s; the time until each caller hears only silence. */
async function clearToSilence(streamed: PlacedCall[], conns: TwilioConn[]): Promise<number[]> {
  const tone5s = payload(250);
  for (const c of conns) c.send({ event: 'media', media: { payload: tone5s } });
  await sleep(1000);
  const clearAt = conns.map((c) => {
    c.send({ event: 'clear' });
    return performance.now();
  });
  await sleep(1000);
  return streamed.map((c, i) => silenceFrom(c, clearAt[i]!) - clearAt[i]!);
}

/** The figures of one run, as its report (markdown) and its summary line. */
function runReport(
  CALLS: number,
  r: { loads: number[]; rampMs: number; n: number; w: LossWindow; audio: Awaited<ReturnType<typeof firstAudioRounds>>; toSilence: number[]; loopAfter: LoopDelay },
): { md: string; summary: string } {
  const { loads, rampMs, n, w, toSilence, loopAfter } = r;
  const { firstAudio, cold, perRound } = r.audio;
  const { ms, rtpGot, mediaGot, gaps, loop } = w;
  const f = (x: number) => x.toFixed(1);
  const expected = ms / 20;
  const loss = (got: number[]) => got.reduce((n, g) => n + Math.max(0, expected - 1 - g), 0) / (expected * got.length);
  const perStream = (cpuMs: number) => ((cpuMs / ms) * 1000) / n;
  const missing = (xs: number[]) => xs.filter((x) => Number.isNaN(x)).length;
  const fa = firstAudio.filter((x) => !Number.isNaN(x));
  const cs = toSilence.filter((x) => !Number.isNaN(x));
  const hl = { p99: w.harnessLoop.percentile(99) / 1e6, max: w.harnessLoop.max / 1e6 };
  const md = `# Benchmark: Twilio Media Streams, ${CALLS} calls

Command: \`source .data/env && npx tsx scripts/bench/twilio/media-streams.ts --calls ${COUNTS.join(',')} --seconds ${SECONDS} --rounds ${ROUNDS}${RT ? ` --rt-priority ${RT}` : ''}${PROF ? ` --cpu-prof ${PROF}` : ''}\`
Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, shared with other work; load (1 min) through the run ${f(Math.min(...loads))}–${f(Math.max(...loads))}; run ${new Date().toISOString()}.

${CALLS} concurrent calls placed by one sipp, 50 a second (ramp ${(rampMs / 1000).toFixed(1)} s) into one media-app node in a process of
its own, each with a bidirectional Twilio stream (\`<Connect><Stream>\`) to one \`ws\` server in the bench's
process; ${n} of ${CALLS} streams started (the others' WebSocket handshake did not complete within 5 s: their
calls ended) and are measured.

| measure | p50 | p99 | max | notes |
|---|---|---|---|---|
| RTP to the callers over ${SECONDS} s | – | – | – | loss ${(loss(rtpGot) * 100).toFixed(3)} % (${rtpGot.reduce((a, b) => a + b, 0)} packets) |
| RTP inter-arrival gap (baseline: the call's own clock) | ${f(pct(gaps, 50))} ms | ${f(pct(gaps, 99))} ms | ${f(Math.max(...gaps))} ms | |
| \`media\` messages to the server over ${SECONDS} s | – | – | – | loss ${(loss(mediaGot) * 100).toFixed(3)} % |
| first audio out (server \`media\` → caller's first voiced RTP), rounds 2–${ROUNDS} | ${f(pct(fa, 50))} ms | ${f(pct(fa, 99))} ms | ${f(Math.max(...fa))} ms | ${missing(firstAudio)} of ${firstAudio.length} heard nothing; p99 per round (ms): ${perRound} |
| first audio out, round 1 (the streams' first playback) | ${f(pct(cold, 50))} ms | ${f(pct(cold, 99))} ms | ${f(Math.max(...cold))} ms | |
| \`clear\` → silence at the caller | ${f(pct(cs, 50))} ms | ${f(pct(cs, 99))} ms | ${f(Math.max(...cs))} ms | ${missing(toSilence)} calls not measured |
| platform node event-loop delay, loss window | ${f(loop.p50)} ms | ${f(loop.p99)} ms | ${f(loop.max)} ms | playback and clear phases: p99 ${f(loopAfter.p99)}, max ${f(loopAfter.max)} ms |

CPU over the loss window, per stream per second: the platform's process ${perStream(w.cpu.all).toFixed(2)} ms
(${(w.cpu.all / ms).toFixed(2)} cores), of it the node main thread ${perStream(w.cpu.main).toFixed(2)} ms and the media
worker ${perStream(w.cpu.worker).toFixed(2)} ms (/proc, 10 ms ticks). The harness (this process: the ws server, the RTP
peers, sipp control; sipp itself not counted) ${perStream(w.cpu.harness).toFixed(2)} ms, its event-loop delay p99 ${f(hl.p99)}, max ${f(hl.max)} ms.
`;
  const pp = (xs: number[]) => `p50 ${f(pct(xs, 50))}, p99 ${f(pct(xs, 99))} ms`;
  const summary =
    `${CALLS} streams, load ${f(Math.min(...loads))}–${f(Math.max(...loads))}: ${n} of ${CALLS} started; RTP loss ${(loss(rtpGot) * 100).toFixed(3)} %, \`media\` loss ${(loss(mediaGot) * 100).toFixed(3)} %; ` +
    `first audio ${pp(fa)} (round 1 p99 ${f(pct(cold, 99))}); \`clear\` → silence ${pp(cs)}; ` +
    `platform ${perStream(w.cpu.all).toFixed(2)} ms CPU per stream-second (node main thread ${perStream(w.cpu.main).toFixed(2)}, worker ${perStream(w.cpu.worker).toFixed(2)}); ` +
    `platform event-loop delay p99 ${f(loop.p99)} ms; RTP gap p99 ${f(pct(gaps, 99))} ms`;
  return { md, summary };
}

/** One run of `CALLS` calls: writes its report and returns its summary line (the docs row's figures). */
async function run(CALLS: number): Promise<string> {
  await truncateAll();
  // two RTP ports a call, and room: the block lies in the kernel's ephemeral range, where the peers' and
  // the streams' own sockets take ports the engine then skips (at 200 calls and 440 ports, a call got 488)
  const rtp = portBlock('platformRtp', Math.max(200, CALLS * 4 + 100));
  const app = await twilioApp('/bench', { keepMedia: false });
  const env: Record<string, string> = {
    REDIS_KEY_PREFIX: `bms${process.pid}:`,
    // the ws server (the customer's) listens on loopback: opted in
    EGRESS_ALLOW_CIDRS: '127.0.0.0/8',
    RTP_PORT_MIN: String(rtp.min),
    RTP_PORT_MAX: String(rtp.max),
    ...(RT ? { MEDIA_WORKER_RT_PRIORITY: RT } : {}),
  };
  if (PROF) fs.mkdirSync(PROF, { recursive: true });
  const platform = await startPlatformProcess(env, { serve: require.resolve('./platform-calls'), nodeArgs: PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(PROF)] : [] });
  const calls: PlacedCall[] = [];
  const loads: number[] = [os.loadavg()[0]!];
  const loadTimer = setInterval(() => loads.push(os.loadavg()[0]!), 2000);
  try {
    const list = await numbers(app.url, CALLS);
    const rampFrom = performance.now();
    // one sipp places them all, 50 a second
    const placed = await placeCalls(platform, list);
    calls.push(...placed.calls);
    console.error(`${calls.length} calls up, ${app.conns.length} streams`);
    const rampMs = performance.now() - rampFrom;
    const { streamed, conns } = await streamsUp(app, calls, CALLS);
    await sleep(1000);
    const w = await lossWindow(platform, streamed, conns);
    const audio = await firstAudioRounds(streamed, conns);
    const toSilence = await clearToSilence(streamed, conns);
    const loopAfter = await ask<LoopDelay>(platform, { op: 'loop', reset: false });
    loads.push(os.loadavg()[0]!);
    const { md, summary } = runReport(CALLS, { loads, rampMs, n: conns.length, w, audio, toSilence, loopAfter });
    const out = reportPath(`twilio-media-streams-${CALLS}`);
    fs.writeFileSync(out, md);
    process.stdout.write(md);
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
    return summary;
  } finally {
    clearInterval(loadTimer);
    for (const c of calls) c.peer.close();
    killAllSipp();
    await app.close();
    await platform.close();
    if (PROF) console.log(`CPU profile of the platform's process in ${PROF}`);
  }
}

async function main(): Promise<void> {
  const lines: string[] = [];
  for (const calls of COUNTS) lines.push(await run(calls));
  console.log(`\nFor docs/benchmarks.md (${new Date().toISOString()}, ${os.cpus().length} cores, load 1 min now ${os.loadavg()[0]!.toFixed(1)}):`);
  for (const l of lines) console.log(`- ${l}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
