/**
 * Media engine benchmark (bounded to a few minutes):
 *   npx tsx scripts/bench/media/run.ts [--quick] [--levels 100,250,500] [--phases 1,4] [--nice 0,-10] [--rt 10 [--rt-max 0.95]] [--rtp-io uring,uring-c,native,dgram] [--bridge] [--neighbour] [--split-cpus] [--shared-gc] [--no-extras]
 *   (--rtp-io uring-c: 'uring' with plain G.711 legs served in C, plainLegsInC; 'uring' alone keeps every leg in JS;
 *   --bridge: the legs are bridged in pairs with nothing else to do, instead of each playing a prompt and recording)
 *   (--nice: worker thread nice values compared in one run, the peer at the same value; --neighbour: a bounded
 *   busy process and a 10 ms wake-up probe beside each level, see neighbour.ts; --rt: the worker on SCHED_RR at
 *   that priority with the watchdog of media-engine/worker/realtime.ts, its drops printed)
 * Run it on a quiet machine: it prints the load average first and warns when it is above 1.5.
 *  - baseline: raw Node UDP ping/echo between two processes (packets/s)
 *  - legs on ONE worker (one core): each plays a prompt and records; a separate process sends
 *    G.711 to every leg and measures the send-time error (p50/p99 vs the ideal 20 ms grid) and loss
 *  - the same with the API thread kept busy (worker isolation)
 *  - a 100-party conference on one worker, and the mixer's cost per participant
 */
import { fork, execFileSync, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MediaServer, type Endpoint } from '../../../media-engine';
import { ConferenceMixer, type MixMember } from '../../../media-engine/worker/mixer';
import { startNeighbour, type NeighbourReport } from './neighbour';
import { procStat } from '../../../media-engine/worker/proc-stat';
import { RTP_IO_KINDS, type RtpIoKind } from '../../../media-engine/worker/rtp-transport';
import { pcmuOffer } from '../../../testkit/media-engine/support';

// Run as media-app runs (scripts/start.ts): with --single-threaded-gc, unless `--shared-gc` asks for V8's
// default (GC helper threads at ordinary priority, which a prioritised worker waits for beside a busy neighbour).
// V8 takes the flag only at start-up: the bench starts itself again with it.
if (!process.execArgv.includes('--single-threaded-gc') && !process.argv.includes('--shared-gc')) {
  const r = spawnSync(process.execPath, ['--single-threaded-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const quick = process.argv.includes('--quick');
/** `--no-extras`: only the plain levels (no busy-API-thread row, no conference), e.g. under --cpu-prof */
const noExtras = process.argv.includes('--no-extras');

/**
 * `--name v1,v2` (or `--name=v1,v2`): the numbers given, each checked by `ok`; null when the flag is
 * absent; a bad value ends the run with `usage`.
 */
function numbersArg(name: string, ok: (n: number) => boolean, usage: string): number[] | null {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return null;
  const raw = argv[i].includes('=') ? argv[i].slice(argv[i].indexOf('=') + 1) : argv[i + 1];
  const list = (raw ?? '').split(',').map((x) => Number(x.trim()));
  if (!raw || list.some((n) => !ok(n))) {
    console.error(`bad --${name} "${raw ?? ''}": expected ${usage}`);
    process.exit(2);
  }
  return list;
}
const int = (min: number, max: number) => (n: number) => Number.isInteger(n) && n >= min && n <= max;

/** `--levels 100,250,500`: leg counts to measure, each 1..5000 */
const LEVELS_ARG = numbersArg('levels', int(1, 5000), 'a comma-separated list of leg counts, e.g. --levels 100,250,500');
/** `--phases 1,4`: engine send phases per 20 ms to compare in one run (MediaServer tickPhases); default 4 */
const PHASES = numbersArg('phases', int(1, 10), 'e.g. --phases 1,4') ?? [4];
/** `--nice 0,-10`: worker thread nice values to compare in one run (MediaServer workerNice); default: unchanged */
const NICES: (number | undefined)[] = numbersArg('nice', int(-20, 19), 'e.g. --nice 0,-10') ?? [undefined];
/** `--rt 10`: MediaServer workerRealtime (SCHED_RR at that priority, watched); default: off */
const RT = numbersArg('rt', int(1, 99), 'a SCHED_RR priority 1..99')?.[0];
/** `--rt-max 0.95`: the watchdog's limit (share of one core) with --rt; default the engine's (0.8) */
const RT_MAX = numbersArg('rt-max', (v) => v >= 0.1 && v <= 1, 'a share of one core, 0.1..1')?.[0];
/** `--neighbour`: a busy process and a 10 ms wake-up probe run beside every level (both bounded, default priority) */
const NEIGHBOUR = process.argv.includes('--neighbour');
/** `--bridge`: legs bridged in pairs (plain G.711 legs: what uring-c serves in C) instead of prompts and recordings */
const BRIDGE = process.argv.includes('--bridge');
/**
 * `--rtp-io native,uring,uring-c`: the workers' RTP socket kinds compared in one run (default: the engine's
 * default); `uring-c` is 'uring' with plainLegsInC, `uring` then keeps every leg in JS.
 */
const RTP_IO: (RtpIoKind | 'uring-c' | undefined)[] = (() => {
  const i = process.argv.indexOf('--rtp-io');
  if (i < 0) return [undefined];
  const kinds = (process.argv[i + 1] ?? '').split(',');
  if (!kinds.length || kinds.some((k) => k !== 'uring-c' && !(RTP_IO_KINDS as readonly string[]).includes(k))) {
    console.error('--rtp-io: a comma-separated list of uring, uring-c, native and dgram, e.g. --rtp-io native,uring,uring-c');
    process.exit(2);
  }
  return kinds as (RtpIoKind | 'uring-c')[];
})();

const LEVELS = LEVELS_ARG ?? (quick ? [100, 250] : [100, 250, 500, 750, 1000]);
const MAX_QUIET_LOAD = 1.5;
{
  const load = os.loadavg();
  console.log(`load average at start: ${load.map((x) => x.toFixed(2)).join(' ')} (1, 5, 15 min); levels ${LEVELS.join(',')}`);
  if (load[0] > MAX_QUIET_LOAD) {
    console.warn(
      `WARNING: 1-minute load ${load[0].toFixed(2)} is above ${MAX_QUIET_LOAD}: other work shares the cores, so pacing figures will be pessimistic; re-run on a quiet machine before publishing them.`,
    );
  }
}
const RUN_MS = quick ? 5000 : 8000;
const WARMUP_MS = 2000;

const peer = fork(path.join(__dirname, 'peer.ts'), [], { execArgv: ['--require', 'tsx/cjs'] });
/**
 * `--split-cpus`: this process (and the media worker it starts) on CPU 0, the peer (the far end, which on a
 * real node is other machines) on CPU 1, the neighbour unpinned. Without it the kernel's wake-affine placement
 * tends to stack the worker on the CPU of the peer that wakes it with every packet, while a neighbour holds the
 * other CPU: the bench's own far end then competes with the worker, which a remote far end never does.
 */
const SPLIT_CPUS = process.argv.includes('--split-cpus');
if (SPLIT_CPUS) {
  if (os.cpus().length < 2) {
    console.error('--split-cpus needs two CPUs');
    process.exit(2);
  }
  execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  execFileSync('taskset', ['-a', '-p', '-c', '1', String(peer.pid)], { stdio: 'ignore' });
  console.log('--split-cpus: bench and media worker on CPU 0, the peer (far end) on CPU 1, neighbour unpinned');
}
function ask<T>(m: unknown): Promise<T> {
  return new Promise((resolve) => {
    peer.once('message', (r) => resolve(r as T));
    peer.send(m as never);
  });
}

async function baseline(): Promise<number> {
  const { port } = await ask<{ port: number }>({ cmd: 'echo' });
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const pkt = Buffer.alloc(172);
  let count = 0;
  const end = Date.now() + 3000;
  await new Promise<void>((resolve) => {
    s.on('message', () => {
      count++;
      if (Date.now() < end) s.send(pkt, port, '127.0.0.1');
      else resolve();
    });
    for (let i = 0; i < 64; i++) s.send(pkt, port, '127.0.0.1');
  });
  s.close();
  return count / 3;
}

/** the far end's offer: PCMU at 20 ms with RFC 4733 digits */
const offer = (port: number): string => pcmuOffer(port, '127.0.0.1', true);

interface LevelResult {
  legs: number;
  p50: number;
  p99: number;
  max: number;
  lossPct: number;
  tickLateP99: number;
  tickCostP50: number;
  tickCostP99: number;
  pps: number;
  /** CPU of this process (worker + API thread) per leg per 20 ms frame over the measured run, µs */
  cpuUsPerLegFrame: number;
  /** the kernel's part of it (system time), µs */
  sysUsPerLegFrame: number;
  /** CPU of the media worker thread alone (user + system, /proc) per leg-frame it served, µs: what the I/O path changes */
  workerUsPerLegFrame: number;
  /** io_uring_enter calls per tick ('uring' workers), else null */
  entersPerTick: number | null;
  neighbour: NeighbourReport | null;
  /** the far end's socket kind: 'uring' (packets timed by the kernel's arrival stamp) or 'dgram' */
  peerIo: string;
}

async function level(ms: MediaServer, n: number, prompt: string, dir: string, opts: { busy?: boolean; conference?: boolean } = {}): Promise<LevelResult> {
  const { ports, io } = await ask<{ ports: number[]; io: string }>({ cmd: 'open', n });
  const eps: Endpoint[] = [];
  for (let i = 0; i < n; i++) eps.push(await ms.createEndpoint({ remoteSdp: offer(ports[i]), inbandDtmf: false }));
  if (opts.conference) {
    const conf = await ms.createConference(`bench-${n}`);
    for (const ep of eps) await ep.joinConference(conf);
  } else if (BRIDGE) {
    for (let i = 0; i + 1 < n; i += 2) await eps[i].bridge(eps[i + 1]);
  } else {
    for (const [i, ep] of eps.entries()) {
      ep.play(prompt).catch(() => {});
      ep.record(path.join(dir, `leg-${i}.wav`), { duration: Math.ceil((RUN_MS + 2000) / 1000) }).catch(() => {});
    }
  }
  let busyTimer: NodeJS.Timeout | null = null;
  if (opts.busy) {
    // keep the API thread 80% busy with synchronous work, as a loaded media-app would be
    busyTimer = setInterval(() => {
      const until = performance.now() + 40;
      while (performance.now() < until);
    }, 50);
  }
  let cpu0 = process.cpuUsage();
  const tid = ms.workerTids[0];
  const workerCpuMs = () => (tid === undefined ? 0 : procStat(process.pid, tid).cpuMs);
  let wcpu0 = workerCpuMs();
  let enters0 = 0;
  setTimeout(() => {
    void ms.resetStats();
    cpu0 = process.cpuUsage();
    wcpu0 = workerCpuMs();
    void ms.stats().then(([w]) => (enters0 = w.rtpRing?.enters ?? 0));
  }, WARMUP_MS);
  const nb = NEIGHBOUR ? startNeighbour(WARMUP_MS + RUN_MS) : null;
  const rx = await ask<{ p50: number; p99: number; max: number; lossPct: number; legsHeard: number }>({ cmd: 'start', targets: eps.map((e) => e.local.port), durationMs: RUN_MS, warmupMs: WARMUP_MS });
  const cpu = process.cpuUsage(cpu0);
  const wcpu = workerCpuMs() - wcpu0;
  if (busyTimer) clearInterval(busyTimer);
  const neighbour = nb ? await nb.done : null;
  const [ws] = await ms.stats();
  // the frames each leg was served: the worker's ticks over the measured run, one per leg per `phases` ticks
  const legFrames = (ws.ticks / currentPhases) * n;
  for (const ep of eps) await ep.destroy();
  for (const c of ['bench-' + n]) await ms.getConference(c)?.destroy();
  await ask({ cmd: 'close' });
  for (const f of fs.readdirSync(dir)) if (f.startsWith('leg-')) fs.rmSync(path.join(dir, f));
  const r = {
    legs: n,
    p50: rx.p50,
    p99: rx.p99,
    max: rx.max,
    lossPct: rx.lossPct,
    tickLateP99: ws.lateP99,
    tickCostP50: ws.tickCostP50,
    tickCostP99: ws.tickCostP99,
    pps: n * 50 * 2,
    cpuUsPerLegFrame: (cpu.user + cpu.system) / ((RUN_MS - WARMUP_MS) / 20) / n,
    sysUsPerLegFrame: cpu.system / ((RUN_MS - WARMUP_MS) / 20) / n,
    workerUsPerLegFrame: legFrames > 0 ? (wcpu * 1000) / legFrames : 0,
    entersPerTick: ws.rtpRing && ws.ticks > 0 ? (ws.rtpRing.enters - enters0) / ws.ticks : null,
    neighbour,
    peerIo: io,
  };
  console.log(JSON.stringify({ ...r, legsHeard: rx.legsHeard, busy: !!opts.busy, conference: !!opts.conference }));
  return r;
}

function mixerCostPerParticipantUs(n: number): number {
  const m = new ConferenceMixer('x');
  for (let i = 0; i < n; i++) {
    const f = Int16Array.from({ length: 160 }, (_, k) => ((k * (i + 1)) % 2000) - 1000);
    const member: MixMember = { id: String(i), input: () => f, mixOut: new Int16Array(160), muteIn: false, muteOut: false };
    m.join(member);
  }
  for (let i = 0; i < 200; i++) m.tick();
  const ticks = 2000;
  const t0 = performance.now();
  for (let i = 0; i < ticks; i++) m.tick();
  return ((performance.now() - t0) / ticks / n) * 1000;
}

const f2 = (x: number) => x.toFixed(2);
/** the engine phases of the server being measured (level() divides the worker's ticks by it) */
let currentPhases = 4;

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'me-bench-'));
  const prompt = path.join(dir, 'prompt.wav');
  execFileSync('espeak-ng', ['-w', path.join(dir, 'p.wav'), 'Thank you for calling. Please hold while we connect your call. Your call is important to us.']);
  execFileSync('sox', [path.join(dir, 'p.wav'), '-r', '8000', '-c', '1', '-b', '16', prompt, 'repeat', '3']);
  console.log(`machine: ${os.cpus().length} cores, load ${os.loadavg().map(f2).join(' ')}, node ${process.version}`);
  const base = await baseline();
  console.log(`baseline raw UDP echo (2 processes, window 64): ${Math.round(base)} round trips/s`);
  const rows: { label: string; r: LevelResult }[] = [];
  let mixNote = '';
  for (const rtpIo of RTP_IO)
    for (const nice of NICES)
      for (const phases of PHASES) {
        // the far end (the phones) runs at the worker's nice value: a starved peer would measure its own delays
        if (nice !== undefined) os.setPriority(peer.pid!, nice);
        currentPhases = phases;
        const ms = await MediaServer.start({
          workers: 1,
          rtpPorts: { min: 30000, max: 39999 },
          tickPhases: phases,
          workerNice: nice,
          workerRealtime: RT === undefined ? undefined : { priority: RT, maxCpuShare: RT_MAX },
          rtpIo: rtpIo === 'uring-c' ? 'uring' : rtpIo,
          plainLegsInC: rtpIo === undefined ? undefined : rtpIo === 'uring-c',
        });
        const ioName = rtpIo ?? ms.rtpIo;
        ms.on('workerSchedule', (c) =>
          console.log(`   worker ${c.index} scheduling: ${c.policy} (${c.reason}${c.cpuShare === undefined ? '' : `, ${f2(c.cpuShare * 100)} % of a core`}${c.message ? `: ${c.message}` : ''})`),
        );
        console.log(
          `-- RTP sockets ${ioName}${BRIDGE ? ', legs bridged in pairs' : ''}; engine send phases per 20 ms: ${phases}; worker nice ${nice ?? 'unchanged'}${RT === undefined ? '' : `; SCHED_RR ${RT}: ${JSON.stringify(ms.schedules)}`}`,
        );
        const results: LevelResult[] = [];
        for (const n of LEVELS) results.push(await level(ms, n, prompt, dir));
        for (const r of results) rows.push({ label: `${r.legs}`, r });
        if (!noExtras) {
          const busyN = Math.min(quick ? 250 : 500, Math.max(...LEVELS));
          const busy = await level(ms, busyN, prompt, dir, { busy: true });
          const conf = await level(ms, 100, prompt, dir, { conference: true });
          rows.push({ label: `${busy.legs}, API thread 80% busy`, r: busy }, { label: '100-party conference', r: conf });
          const plain100 = results.find((r) => r.legs === 100);
          mixNote = `conference mixing: ${mixerCostPerParticipantUs(100).toFixed(3)} µs per participant per 20 ms tick (mixer alone, 100 parties); in the engine ${plain100 ? f2(((conf.tickCostP50 - plain100.tickCostP50) / 100) * 1000) : 'n/a (no 100-leg level)'} µs per participant per tick (tick cost p50, conference minus 100 plain legs)`;
        }
        await ms.destroy();
        for (const row of rows.slice(-results.length - (noExtras ? 0 : 2)))
          row.label = `${row.label} (${ioName}, phases ${phases}${nice === undefined ? '' : `, nice ${nice}`}${RT === undefined ? '' : `, RR ${RT}`})`;
      }
  peer.send({ cmd: 'exit' });
  fs.rmSync(dir, { recursive: true, force: true });

  const lines: string[] = [];
  const nbHead = NEIGHBOUR ? ' neighbour CPU share | probe late p50 / p99 ms |' : '';
  lines.push(
    `| legs on 1 worker | packets/s (in+out) | send error p50 ms | p99 ms | max ms | loss % | tick lateness p99 ms | tick cost p50 / p99 ms (per 20 ms) | CPU µs per leg per frame (process / worker thread) | pps / baseline |${nbHead}`,
  );
  lines.push(`|---|---|---|---|---|---|---|---|---|---|${NEIGHBOUR ? '---|---|' : ''}`);
  for (const { label, r } of rows) {
    const nb = r.neighbour ? ` ${f2(r.neighbour.busyCpuShare)} | ${f2(r.neighbour.probeLateP50)} / ${f2(r.neighbour.probeLateP99)} |` : NEIGHBOUR ? ' | |' : '';
    lines.push(
      `| ${label} | ${r.pps} | ${f2(r.p50)} | ${f2(r.p99)} | ${f2(r.max)} | ${f2(r.lossPct)} | ${f2(r.tickLateP99)} | ${f2(r.tickCostP50)} / ${f2(r.tickCostP99)} | ${f2(r.cpuUsPerLegFrame)} / ${f2(r.workerUsPerLegFrame)} | ${f2(r.pps / base)} |${nb}`,
    );
  }
  lines.push('');
  lines.push(`baseline: ${Math.round(base)} UDP round trips/s between two Node processes (window 64); load average at end ${os.loadavg().map(f2).join(' ')}`);
  const peerIo = [...new Set(rows.map(({ r }) => r.peerIo))].join(', ');
  lines.push(
    `far end's sockets: ${peerIo} (${peerIo === 'uring' ? "each packet timed by the kernel's arrival stamp" : "'dgram': each packet timed when the far end's event loop reads it"}; PEER_IO=dgram for the latter)`,
  );
  if (mixNote) lines.push(mixNote);
  console.log('\n' + lines.join('\n'));
})().catch((e) => {
  console.error(e);
  peer.kill();
  process.exit(1);
});
