/**
 * Legs per worker core for the wideband codecs (issue #34 benchmarks), bounded to a few minutes:
 *   npx tsx scripts/bench/media/codec-legs.ts [--pairs G722-PCMU,opus-PCMU,opus-opus] [--levels 200,400]
 *       [--run-ms 6000] [--retries 1] [--all] [--nice -10] [--rt 10] [--shared-gc] [--js-legs]
 *
 * Pairs of legs bridged on ONE media worker: one leg of the pair speaks the codec, the other G.711
 * (G.722↔PCMU, Opus↔PCMU: transcoded in the engine) or both Opus (no transcoding). The far end is
 * peer.ts in its own process: every leg's far end sends its codec's packets of a tone (1,000 Hz on
 * side A, 600 Hz on side B), encoded once up-front with the engine's codec module and replayed each
 * 20 ms at the leg's own offset; it measures the engine's send-time error (p99 vs the ideal 20 ms grid;
 * for Opus↔Opus, whose packets the engine forwards as they came, the delay from the far end's send of
 * each packet, relay-timing.ts) and loss, and decodes each leg's last packets to check it hears the OTHER side's tone. A level
 * passes with 0 % loss both ways, every leg hearing its tone and p99 < 10 ms; the leg count is stepped
 * up until a level fails (retried once: the machine is shared). Legs count both sides of a pair.
 * CPU per leg-frame = this process's CPU (worker + API thread; and the worker thread alone) over the
 * measured window / (legs × 20 ms frames). Baseline, same run: Node UDP ping/echo between this process
 * and the peer (round trips/s, and this process's CPU per round trip: one receive + one send, what a
 * leg-frame's socket work is). `--js-legs`: every leg served in JS (no C legs: the same run's comparison
 * for pairs the engine serves in C, G.711↔G.711 and forwarding Opus↔Opus).
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import os from 'node:os';
import path from 'node:path';
import { MediaServer, type Endpoint, type MediaServerOptions } from '../../../media-engine';
import { procStat } from '../../../media-engine/worker/proc-stat';
import type { BenchCodec, LegSpec } from './codec-tone';

export type PairKind = 'G722-PCMU' | 'opus-PCMU' | 'opus-opus' | 'PCMU-PCMU';
export const PAIRS: Record<PairKind, { a: BenchCodec; b: BenchCodec; goal: number }> = {
  'G722-PCMU': { a: 'G722', b: 'PCMU', goal: 400 },
  'opus-PCMU': { a: 'opus', b: 'PCMU', goal: 200 },
  'opus-opus': { a: 'opus', b: 'opus', goal: 1000 },
  'PCMU-PCMU': { a: 'PCMU', b: 'PCMU', goal: 1000 },
};
const PT: Record<BenchCodec, number> = { PCMU: 0, G722: 9, opus: 111 };
export const TONE_A = 1000;
export const TONE_B = 600;
/** a level's limits: the issue's */
export const MAX_P99_MS = 10;

/** The far end (peer.ts) in its own process. */
export class Peer {
  private readonly child: ChildProcess;
  /** `io`: the far ends' sockets (peer.ts): the kernel's arrival stamps on the ring when it runs (default), or node:dgram */
  constructor(opts: { io?: 'uring' | 'dgram' } = {}) {
    const env = { ...process.env };
    if (opts.io === 'dgram') env.PEER_IO = 'dgram';
    else delete env.PEER_IO;
    this.child = fork(path.join(__dirname, 'peer.ts'), [], { execArgv: ['--require', 'tsx/cjs'], env });
  }
  get pid(): number | undefined {
    return this.child.pid;
  }
  ask<T>(m: object): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the peer exited (${code})`));
      this.child.once('exit', onExit);
      this.child.once('message', (r) => {
        this.child.off('exit', onExit);
        resolve(r as T);
      });
      this.child.send(m);
    });
  }
  /** A command that gets no answer (`stall`: the far end's event loop held busy for `ms`). */
  tell(m: object): void {
    this.child.send(m);
  }
  close(): void {
    if (this.child.connected) this.child.send({ cmd: 'exit' });
    else this.child.kill();
  }
}

export function offer(codec: BenchCodec, port: number): string {
  const fmt =
    codec === 'opus'
      ? [`m=audio ${port} RTP/AVP 111 110`, 'a=rtpmap:111 opus/48000/2', 'a=fmtp:111 maxplaybackrate=16000;useinbandfec=1', 'a=rtpmap:110 telephone-event/48000']
      : [`m=audio ${port} RTP/AVP ${PT[codec]} 101`, `a=rtpmap:${PT[codec]} ${codec}/8000`, 'a=rtpmap:101 telephone-event/8000'];
  return ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', ...fmt, 'a=ptime:20', 'a=sendrecv', ''].join('\r\n');
}

/** The far-end legs of `pairs` pairs: A0, B0, A1, B1, ... each expecting the other side's tone. */
export function legSpecs(kind: PairKind, pairs: number): LegSpec[] {
  const { a, b } = PAIRS[kind];
  const out: LegSpec[] = [];
  for (let i = 0; i < pairs; i++) out.push({ codec: a, pt: PT[a], toneHz: TONE_A, expectHz: TONE_B }, { codec: b, pt: PT[b], toneHz: TONE_B, expectHz: TONE_A });
  return out;
}

export interface PairRunOptions {
  kind: PairKind;
  /** legs in all (2 per pair) */
  legs: number;
  /** measured window after the warm-up, ms */
  runMs: number;
  warmupMs: number;
  /** the server's tickPhases (default 4, the engine's): legs are served once per `phases` ticks */
  phases?: number;
  /** the far-end legs (default legSpecs(kind, legs / 2)): a test changes a tone or silences a side */
  specs?: LegSpec[];
  /** called when the measured window starts, with the bridged pairs and the far ends' ports, in leg order (a test puts a leg on hold) */
  during?: (pairs: Array<[Endpoint, Endpoint]>, farPorts: number[]) => Promise<void>;
  /**
   * How the send error is taken: 'grid', each packet against its leg's 20 ms grid (the engine sends on its
   * own clock), or 'relay', its delay from when the far end sent the packet it carries (the engine forwards
   * Opus↔Opus packets as they came). Default: 'relay' for opus-opus, else 'grid'.
   */
  timing?: 'grid' | 'relay';
}

export interface PairResult {
  kind: PairKind;
  legs: number;
  p50: number;
  p99: number;
  max: number;
  /** RTP slots the far ends never got (engine → far end), % */
  lossPct: number;
  /** packets the engine counted lost (far end → engine) */
  engineLost: number;
  legsHeard: number;
  /** the far ends' sockets (peer.ts): 'uring', each packet timed by the kernel's arrival stamp, or 'dgram' */
  peerIo: string;
  /** how the send error was taken (PairRunOptions.timing) */
  timing: 'grid' | 'relay';
  /** legs whose far end decoded silence / something other than the other side's tone */
  silent: number;
  wrongTone: number;
  minToneShare: number;
  /** this process's CPU per leg per 20 ms frame of the window, µs; the worker thread's alone */
  cpuUsPerLegFrame: number;
  workerUsPerLegFrame: number;
  /** the worker's CPU per leg-frame it really served (a late worker skips ticks: then fewer than the window's) */
  workerUsPerServedLegFrame: number;
  /** leg-frames served / the window's leg-frames (1: no tick skipped) */
  servedShare: number;
  tickCostP50: number;
  tickCostP99: number;
  /** the legs served in C at the window's end (native/rtp_legs.c: G.711 pairs, forwarding Opus pairs; 0 with `--js-legs`) */
  cLegs: number;
  /** packets the engine decoded and encoded with a wideband codec, per leg-frame (0 for a pass-through) */
  codecDecodesPerLegFrame: number;
  codecEncodesPerLegFrame: number;
  /** what failed: empty when the level passes */
  failures: string[];
}

type PeerReport = {
  p50: number;
  p99: number;
  max: number;
  lossPct: number;
  legsHeard: number;
  tones?: { legs: number; silent: number; wrongTone: number; minRms: number | null; minShare: number | null };
};

/** One level: `legs` legs bridged in pairs on `ms`'s single worker, the far ends in `peer`. */
export async function runPair(ms: MediaServer, peer: Peer, o: PairRunOptions): Promise<PairResult> {
  if (o.legs < 2 || o.legs % 2) throw new RangeError(`legs must be an even number ≥ 2, not ${o.legs}`);
  const specs = o.specs ?? legSpecs(o.kind, o.legs / 2);
  const timing = o.timing ?? (o.kind === 'opus-opus' ? 'relay' : 'grid');
  const { ports, io } = await peer.ask<{ ports: number[]; io: string }>({ cmd: 'open', n: o.legs });
  const pairs: Array<[Endpoint, Endpoint]> = [];
  const all: Endpoint[] = [];
  try {
    for (let i = 0; i < o.legs; i += 2) {
      const a = await ms.createEndpoint({ remoteSdp: offer(specs[i].codec, ports[i]), inbandDtmf: false });
      all.push(a);
      const b = await ms.createEndpoint({ remoteSdp: offer(specs[i + 1].codec, ports[i + 1]), inbandDtmf: false, near: a });
      all.push(b);
      await a.bridge(b);
      pairs.push([a, b]);
    }
    const window = armWindow(ms, o, pairs, all, ports);
    const rx = await peer.ask<PeerReport>({ cmd: 'start', targets: all.map((e) => e.local.port), durationMs: o.warmupMs + o.runMs, warmupMs: o.warmupMs, legs: specs, relay: timing === 'relay' });
    const { engine0, error } = await window.started;
    if (error) throw error;
    const end = await window.ended;
    const engine1 = await engineCounts(all);
    // the codec counters span from the window's start to now: per leg-frame the worker served meanwhile
    const [wsNow] = await ms.stats();
    const r = pairResult(o, { rx, io, timing }, end, { engine0, engine1, ticksNow: wsNow.ticks });
    r.failures = failuresOf(r);
    return r;
  } finally {
    for (const ep of all) await ep.destroy().catch(() => {});
    await peer.ask({ cmd: 'close' });
  }
}

type EngineCounts = { lost: number; decoded: number; encoded: number };
/** What the window's end read: this process's and the worker's CPU over the window, and the worker's ticks. */
type WindowEnd = { cpu: NodeJS.CpuUsage; wcpu: number; ticks: number; tickCostP50: number; tickCostP99: number; cLegs: number };

/**
 * The measured window's two edges on timers: at the warm-up's end the counters start (and `during`
 * runs), at the run's end CPU and ticks are read (the peer answers later: it decodes every leg's last
 * packets first).
 */
function armWindow(
  ms: MediaServer,
  o: PairRunOptions,
  pairs: Array<[Endpoint, Endpoint]>,
  all: Endpoint[],
  ports: number[],
): { started: Promise<{ engine0: EngineCounts; error: unknown }>; ended: Promise<WindowEnd> } {
  const tid = ms.workerTids[0];
  const workerCpuMs = () => (tid === undefined ? 0 : procStat(process.pid, tid).cpuMs);
  let cpu0 = process.cpuUsage();
  let wcpu0 = workerCpuMs();
  const started = new Promise<{ engine0: EngineCounts; error: unknown }>((resolve) =>
    setTimeout(() => {
      void ms.resetStats();
      cpu0 = process.cpuUsage();
      wcpu0 = workerCpuMs();
      let engine0: EngineCounts = { lost: 0, decoded: 0, encoded: 0 };
      void engineCounts(all)
        .then((c) => (engine0 = c))
        .then(() => o.during?.(pairs, ports))
        .then(
          () => resolve({ engine0, error: null }),
          (e: unknown) => resolve({ engine0, error: e }),
        );
    }, o.warmupMs),
  );
  const ended = new Promise<WindowEnd>((resolve, reject) =>
    setTimeout(() => {
      const cpu = process.cpuUsage(cpu0);
      const wcpu = workerCpuMs() - wcpu0;
      ms.stats().then(([w]) => resolve({ cpu, wcpu, ticks: w.ticks, tickCostP50: w.tickCostP50, tickCostP99: w.tickCostP99, cLegs: w.cLegs }), reject);
    }, o.warmupMs + o.runMs),
  );
  return { started, ended };
}

/** A level's figures: the far ends' report, CPU per leg-frame (all, and served by the worker), the codec work per served leg-frame. */
function pairResult(
  o: PairRunOptions,
  peer: { rx: PeerReport; io: string; timing: 'grid' | 'relay' },
  w: WindowEnd,
  engine: { engine0: EngineCounts; engine1: EngineCounts; ticksNow: number },
): PairResult {
  const { rx } = peer;
  const servedSoFar = (engine.ticksNow / (o.phases ?? 4)) * o.legs;
  const legFrames = (o.runMs / 20) * o.legs;
  const served = (w.ticks / (o.phases ?? 4)) * o.legs;
  const t = rx.tones ?? { legs: 0, silent: o.legs, wrongTone: 0, minRms: 0, minShare: 0 };
  return {
    kind: o.kind,
    legs: o.legs,
    p50: rx.p50,
    p99: rx.p99,
    max: rx.max,
    lossPct: rx.lossPct,
    engineLost: engine.engine1.lost - engine.engine0.lost,
    legsHeard: rx.legsHeard,
    silent: t.silent,
    wrongTone: t.wrongTone,
    minToneShare: t.minShare ?? 0,
    cpuUsPerLegFrame: (w.cpu.user + w.cpu.system) / legFrames,
    workerUsPerLegFrame: (w.wcpu * 1000) / legFrames,
    workerUsPerServedLegFrame: served > 0 ? (w.wcpu * 1000) / served : 0,
    servedShare: served / legFrames,
    tickCostP50: w.tickCostP50,
    tickCostP99: w.tickCostP99,
    cLegs: w.cLegs,
    codecDecodesPerLegFrame: servedSoFar > 0 ? (engine.engine1.decoded - engine.engine0.decoded) / servedSoFar : 0,
    codecEncodesPerLegFrame: servedSoFar > 0 ? (engine.engine1.encoded - engine.engine0.encoded) / servedSoFar : 0,
    peerIo: peer.io,
    timing: peer.timing,
    failures: [],
  };
}

/** What makes a level fail: loss either way, a leg not heard or not hearing its tone, p99 over the limit. */
export function failuresOf(r: PairResult): string[] {
  const f: string[] = [];
  if (r.lossPct > 0) f.push(`loss ${r.lossPct.toFixed(3)} % at the far ends`);
  if (r.engineLost > 0) f.push(`${r.engineLost} packets lost into the engine`);
  if (r.legsHeard < r.legs) f.push(`${r.legs - r.legsHeard} legs sent nothing`);
  if (r.silent > 0) f.push(`${r.silent} legs heard silence`);
  if (r.wrongTone > 0) f.push(`${r.wrongTone} legs heard something other than the other side's tone`);
  if (r.p99 >= MAX_P99_MS) f.push(`p99 send error ${r.p99.toFixed(2)} ms ≥ ${MAX_P99_MS}`);
  return f;
}

async function engineCounts(eps: Endpoint[]): Promise<EngineCounts> {
  const c = { lost: 0, decoded: 0, encoded: 0 };
  for (const ep of eps) {
    const s = await ep.getStats();
    c.lost += s.lost;
    c.decoded += s.codecDecoded;
    c.encoded += s.codecEncoded;
  }
  return c;
}

/** Node UDP ping/echo with the peer for `ms`: round trips/s and this process's CPU per round trip, µs. */
export async function udpBaseline(peer: Peer, ms = 3000): Promise<{ roundTripsPerS: number; cpuUsPerRoundTrip: number }> {
  const { port } = await peer.ask<{ port: number }>({ cmd: 'echo' });
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const pkt = Buffer.alloc(172);
  let count = 0;
  const cpu0 = process.cpuUsage();
  const end = Date.now() + ms;
  await new Promise<void>((resolve) => {
    s.on('message', () => {
      count++;
      if (Date.now() < end) s.send(pkt, port, '127.0.0.1');
      else resolve();
    });
    for (let i = 0; i < 64; i++) s.send(pkt, port, '127.0.0.1');
  });
  const cpu = process.cpuUsage(cpu0);
  s.close();
  return { roundTripsPerS: count / (ms / 1000), cpuUsPerRoundTrip: (cpu.user + cpu.system) / Math.max(1, count) };
}

/**
 * The engine's RTP ports above the kernel's ephemeral range (32768–60999 here, where the peer's own sockets
 * land) and outside the test suites' blocks of testkit/ports.ts but `free`: 2,250 legs at most.
 */
export const BENCH_SERVER: MediaServerOptions = { workers: 1, rtpPorts: { min: 61000, max: 65499 }, tickPhases: 4 };

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** The default steps of a pair: from half its goal up by a quarter of it, to twice the goal. */
function levelsOf(kind: PairKind): number[] {
  const g = PAIRS[kind].goal;
  const out: number[] = [];
  for (let n = g / 2; n <= g * 2; n += g / 4) out.push(Math.round(n / 2) * 2);
  return out;
}

async function main(): Promise<void> {
  const kinds = (arg('pairs') ?? 'G722-PCMU,opus-PCMU,opus-opus').split(',') as PairKind[];
  const bad = kinds.find((k) => !(k in PAIRS));
  const levelsArg = arg('levels')?.split(',').map(Number);
  const runMs = Number(arg('run-ms') ?? 6000);
  const retries = Number(arg('retries') ?? 1);
  /** `--all`: every level, also past the first that fails (CPU figures on a loaded machine) */
  const ALL = process.argv.includes('--all');
  if (bad || (levelsArg && levelsArg.some((n) => !Number.isInteger(n) || n < 2 || n % 2)) || !(runMs >= 1000) || !(retries >= 0)) {
    console.error(`usage: --pairs ${Object.keys(PAIRS).join(',')} --levels <even leg counts> --run-ms ≥1000 --retries ≥0`);
    process.exit(2);
  }
  const f2 = (x: number) => x.toFixed(2);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, node ${process.version}, load ${os.loadavg().map(f2).join(' ')} (1, 5, 15 min)`);
  // `--nice -10 --rt 10`: the worker as a media node runs it (scripts/start.sh; run.ts's flags), the far end at the same nice
  const nice = arg('nice') === undefined ? undefined : Number(arg('nice'));
  const rt = arg('rt') === undefined ? undefined : Number(arg('rt'));
  if ((nice !== undefined && !(Number.isInteger(nice) && nice >= -20 && nice <= 19)) || (rt !== undefined && !(Number.isInteger(rt) && rt >= 1 && rt <= 99))) {
    console.error('usage: --nice -20..19, --rt 1..99');
    process.exit(2);
  }
  const peer = new Peer();
  if (nice !== undefined && peer.pid !== undefined) os.setPriority(peer.pid, nice);
  const jsLegs = process.argv.includes('--js-legs');
  const ms = await MediaServer.start({ ...BENCH_SERVER, workerNice: nice, workerRealtime: rt === undefined ? undefined : { priority: rt }, ...(jsLegs ? { plainLegsInC: false } : {}) });
  ms.on('workerSchedule', (c) => console.log(`worker ${c.index} scheduling: ${c.policy} (${c.reason})`));
  console.log(`worker nice ${nice ?? 'unchanged'}, ${rt === undefined ? 'default scheduling' : `SCHED_RR ${rt}: ${JSON.stringify(ms.schedules)}`}`);
  const rows: string[] = [];
  try {
    const base = await udpBaseline(peer);
    console.log(`baseline: ${Math.round(base.roundTripsPerS)} UDP round trips/s (window 64), ${f2(base.cpuUsPerRoundTrip)} µs of this process's CPU per round trip`);
    rows.push(
      '| pair | legs | p50 / p99 / max ms | loss % | CPU µs per leg-frame (process / worker / worker per served) | × UDP round trip CPU | codec decodes / encodes per leg-frame | tick cost p50 / p99 ms | load 1 min | result |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const kind of kinds) {
      let best: PairResult | null = null;
      for (const n of levelsArg ?? levelsOf(kind)) {
        let r: PairResult | null = null;
        for (let attempt = 0; attempt <= retries; attempt++) {
          r = await runPair(ms, peer, { kind, legs: n, runMs, warmupMs: 2000, phases: BENCH_SERVER.tickPhases });
          const load = os.loadavg()[0];
          console.log(JSON.stringify({ ...r, load }));
          rows.push(
            `| ${kind} | ${n} (${r.cLegs} in C) | ${f2(r.p50)} / ${f2(r.p99)} / ${f2(r.max)} | ${r.lossPct.toFixed(3)} | ${f2(r.cpuUsPerLegFrame)} / ${f2(r.workerUsPerLegFrame)} / ${f2(r.workerUsPerServedLegFrame)} (${(r.servedShare * 100).toFixed(0)} % served) | ${f2(r.cpuUsPerLegFrame / base.cpuUsPerRoundTrip)} | ${f2(r.codecDecodesPerLegFrame)} / ${f2(r.codecEncodesPerLegFrame)} | ${f2(r.tickCostP50)} / ${f2(r.tickCostP99)} | ${f2(load)} | ${r.failures.length ? r.failures.join('; ') : 'pass'} |`,
          );
          if (!r.failures.length) break;
        }
        if (!r?.failures.length) best = r;
        else if (!ALL) break;
      }
      console.log(`${kind}: ${best ? `${best.legs} legs pass (goal ${PAIRS[kind].goal})` : 'no level passed'}`);
    }
    console.log(
      `\n${rows.join('\n')}\n\nbaseline ${Math.round(base.roundTripsPerS)} round trips/s, ${f2(base.cpuUsPerRoundTrip)} µs CPU per round trip; load at end ${os.loadavg().map(f2).join(' ')}`,
    );
  } finally {
    await ms.destroy();
    peer.close();
  }
}

if (require.main === module) {
  // as media-app runs (scripts/start.ts) and as run.ts measures: V8 with --single-threaded-gc, unless --shared-gc
  if (!process.execArgv.includes('--single-threaded-gc') && !process.argv.includes('--shared-gc')) {
    const r = spawnSync(process.execPath, ['--single-threaded-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
