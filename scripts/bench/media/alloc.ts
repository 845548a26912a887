/**
 * The media worker's hot path without a clock or a far end: N legs on one Engine (in this thread),
 * each playing a prompt and recording, with one inbound G.711 packet per leg per 20 ms handed to the
 * leg's receive path and its outbound packet sent with dgram to a sink process. The engine's ticks run
 * back to back, so the figures do not depend on the machine's load:
 *  - heap allocated and GC count per 10,000 ticks (v8.GCProfiler: allocated = heap growth + what each
 *    GC freed), per leg per tick;
 *  - CPU time per leg per 20 ms frame (process.cpuUsage over the measured ticks);
 *  - the same with the sockets' send replaced by a no-op (`engine only`), so the difference is dgram's.
 *   npx tsx scripts/bench/media/alloc.ts [--legs 500] [--ticks 10000] [--phases 4] [--rtp-io uring,uring-c,native] [--modes full,engine-only] [--bridge]
 * `--rtp-io uring-c`: 'uring' with plain G.711 legs served in C (MediaServerOptions.plainLegsInC; 'uring' keeps
 * every leg in JS); `--bridge`: the legs bridged in pairs with nothing else to do (no prompt, no recording),
 * the plain G.711 leg that uring-c serves in C; the C legs take packets from their sockets only ('wire').
 * Normalised to 10,000 ticks (a 5 ms tick with 4 phases: 2,500 frames per leg). Under callgrind (instructions, repeatable under load):
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out node --import tsx scripts/bench/media/alloc.ts --legs 100 --ticks 2000 --modes full
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import inspector from 'node:inspector';
import v8 from 'node:v8';
import { Engine } from '../../../media-engine/worker/engine';
import type { Leg } from '../../../media-engine/worker/leg';
import { writeRtpInto } from '../../../media-engine/rtp-packet/packet';
import { configureRtpIo, rtpIoKind, rtpRingCounters, RTP_IO_KINDS, type RtpIoKind } from '../../../media-engine/worker/rtp-transport';
import { pcmuOffer } from '../../../testkit/media-engine/support';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}
const LEGS = Number(arg('legs', '250'));
const TICKS = Number(arg('ticks', '4000'));
const PHASES = Number(arg('phases', '4'));
/** `--modes none`: only the `--rtp-io` kinds */
const MODES = arg('modes', 'full,engine-only')
  .split(',')
  .filter((m) => m !== 'none');
const WARMUP = 1000;
/** `--where`: also print where the measured ticks allocate (V8 sampling heap profiler, collected objects included) */
const WHERE = process.argv.includes('--where');
/**
 * `--rtp-io uring,native`: also the 'wire' mode for each kind, in this run: the inbound packets come over
 * real loopback sockets from a pump process (one per leg per 20 ms, sent before the tick that reads them)
 * and the legs send with the kind's sockets, so the figure holds the whole socket path, kernel included.
 */
const WIRE_KINDS = (process.argv.includes('--rtp-io') ? arg('rtp-io', '').split(',') : []).filter(
  (k): k is RtpIoKind | 'uring-c' => k === 'uring-c' || (RTP_IO_KINDS as readonly string[]).includes(k),
);
const BRIDGE = process.argv.includes('--bridge');

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: SampleNode[];
}

function post<T>(s: inspector.Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => s.post(method, params ?? {}, (err, r) => (err ? reject(err) : resolve(r as T))));
}

async function allocationSites(s: inspector.Session): Promise<string[]> {
  const { profile } = await post<{ profile: { head: SampleNode } }>(s, 'HeapProfiler.stopSampling');
  const self = new Map<string, number>();
  const walk = (n: SampleNode, stack: string[]) => {
    const f = n.callFrame;
    const here = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(wt\/[^/]+|node_modules)\//, '')}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
    const chain = [here, ...stack].slice(0, 3);
    if (n.selfSize) self.set(chain.join(' <- '), (self.get(chain.join(' <- ')) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c, chain);
  };
  walk(profile.head, []);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
}

/** the far end's offer: PCMU at 20 ms with RFC 4733 digits */
const offer = (port: number): string => pcmuOffer(port, '127.0.0.1', true);

/** A process that binds a UDP port on loopback and drops what arrives; resolves with its port. */
function startSink(): Promise<{ port: number; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', "const s=require('dgram').createSocket('udp4');s.on('message',()=>{});s.bind(0,'127.0.0.1',()=>process.stdout.write(String(s.address().port)+'\\n'))"], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => child.stdout.once('data', (d: Buffer) => resolve({ port: Number(String(d).trim()), stop: () => child.kill() })));
}

const tickDelay = () => new Promise<void>((r) => setImmediate(r));

/**
 * The far ends of the 'wire' mode, in their own process: `send(k)` has it send tick k's packets (the legs
 * of slot k mod phases, each its 20 ms PCMU packet) and resolves once they are out.
 */
function startPump(ports: number[], phases: number): Promise<{ send: (k: number) => Promise<void>; stop: () => void }> {
  const code = `
    const s = require('dgram').createSocket('udp4');
    const ports = ${JSON.stringify(ports)}; const P = ${phases};
    const bufs = ports.map(() => { const b = Buffer.alloc(172, 0xff); b[0] = 0x80; b[1] = 0; return b; });
    s.bind(0, '127.0.0.1', () => process.send('ready'));
    process.on('message', (k) => {
      const period = Math.floor(k / P);
      let left = 0;
      for (let i = k % P; i < ports.length; i += P) {
        const b = bufs[i];
        b.writeUInt16BE(period & 0xffff, 2); b.writeUInt32BE((period * 160) >>> 0, 4); b.writeUInt32BE(1000 + i, 8);
        left++;
        s.send(b, ports[i], '127.0.0.1', () => { if (--left === 0) process.send(k); });
      }
      if (left === 0) process.send(k);
    });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve) =>
    child.once('message', () =>
      resolve({
        send: (k) =>
          new Promise<void>((r) => {
            child.once('message', () => r());
            child.send(k);
          }),
        stop: () => child.kill(),
      }),
    ),
  );
}

/** LEGS legs on the engine, each sending to the sink: bridged in pairs (`--bridge`) or each playing the prompt and recording. */
async function createLegs(engine: Engine, prompt: string, sinkPort: number): Promise<Leg[]> {
  const legs: Leg[] = [];
  let port = 40000 + Math.floor(Math.random() * 5000) * 2;
  for (let i = 0; i < LEGS; i++) {
    // other processes on this machine take ports too: on EADDRINUSE try the next pair
    for (;;) {
      port += 2;
      try {
        await engine.createLeg(`l${i}`, { address: '127.0.0.1', port, remoteSdp: offer(sinkPort), inbandDtmf: false });
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
      }
    }
    if (BRIDGE) {
      if (i % 2 === 1) engine.bridge(`l${i - 1}`, `l${i}`);
    } else {
      if (!process.argv.includes('--no-play')) void engine.play(`l${i}`, [prompt]).catch(() => {});
      if (!process.argv.includes('--no-record')) void engine.record(`l${i}`, '/dev/null').catch(() => {});
    }
    legs.push(engine['legs'].get(`l${i}`)!);
  }
  return legs;
}

/**
 * The engine's ticks, driven by hand: `step(n)` runs n ticks, each first giving the legs of its slot
 * their inbound packet (from the pump's process in 'wire' mode, else handed to the receive path).
 */
function ticker(engine: Engine, legs: Leg[], sinkPort: number, pump: { send: (k: number) => Promise<void> } | null) {
  const sessions = legs.map((l) => l.session);
  // one inbound packet per leg, rewritten in place each 20 ms; SSRCs and timestamps as real phones send
  // them (32-bit, mostly above 2^31 as unsigned values)
  const pkts = legs.map(() => Buffer.alloc(172));
  const payload = new Uint8Array(160).fill(0xff);
  const ssrcs = legs.map(() => (Math.random() * 0x100000000) | 0);
  const tsBase = legs.map(() => (Math.random() * 0x100000000) | 0);
  const t0 = Date.now();
  let index = 0;
  const step = async (n: number) => {
    for (let k = 0; k < n; k++) {
      index++;
      const slot = index % PHASES;
      const period = Math.floor(index / PHASES);
      if (pump) {
        await pump.send(index); // the slot's packets are in the legs' sockets before the tick reads them
        engine['ticks']['tick'](t0 + index * (20 / PHASES), 0, index);
        continue;
      }
      for (let i = slot; i < LEGS; i += PHASES) {
        const b = pkts[i];
        writeRtpInto(b, false, 0, period & 0xffff, (tsBase[i] + period * 160) | 0, ssrcs[i], payload, 160);
        sessions[i]['onRtp'](b, b.length, 0x7f000001, sinkPort, performance.now());
      }
      engine['ticks']['tick'](t0 + index * (20 / PHASES), 0, index);
    }
  };
  return { step, ticks: () => index };
}

/** TICKS ticks measured after the warm-up: heap growth, the GCs, CPU and wall time, and (`--where`) the allocation sites. */
async function measure(step: (n: number) => Promise<void>) {
  for (let done = 0; done < WARMUP; done += 200) {
    await step(200);
    await tickDelay();
  }
  const session = WHERE ? new inspector.Session() : null;
  if (session) {
    session.connect();
    await post(session, 'HeapProfiler.enable');
    await post(session, 'HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  const prof = new v8.GCProfiler();
  (globalThis as { gc?: () => void }).gc?.();
  const heap0 = v8.getHeapStatistics().used_heap_size;
  prof.start();
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (let done = 0; done < TICKS; done += 500) {
    await step(Math.min(500, TICKS - done));
    await tickDelay();
  }
  const wall = performance.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  const heap1 = v8.getHeapStatistics().used_heap_size;
  const stats = prof.stop();
  const sites = session ? await allocationSites(session) : [];
  session?.disconnect();
  let freed = 0;
  const kinds: Record<string, number> = {};
  for (const g of stats.statistics) {
    freed += g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize;
    kinds[g.gcType] = (kinds[g.gcType] ?? 0) + 1;
  }
  return { allocated: heap1 - heap0 + freed, gcs: stats.statistics.length, kinds, cpu, wall, sites };
}

async function run(mode: string, prompt: string, sinkPort: number, kind?: RtpIoKind | 'uring-c') {
  if (kind) configureRtpIo(kind === 'uring-c' ? 'uring' : kind, { cLegs: kind === 'uring-c' });
  const engine = new Engine(
    () => {},
    () => {},
    { phases: PHASES },
  );
  engine.clock.stop();
  const legs = await createLegs(engine, prompt, sinkPort);
  // createLeg starts the engine's own clock again: stopped, so only the ticks below run (else the real
  // 5 ms clock ticks too while this waits, and the work per frame counted here depends on wall time)
  engine.clock.stop();
  const pump =
    mode === 'wire'
      ? await startPump(
          legs.map((l) => l.session.port),
          PHASES,
        )
      : null;
  if (mode === 'engine-only') for (const l of legs) l.session['rtp'].send = () => {};
  for (let k = 0; k < 50; k++) await tickDelay(); // let the prompts load
  const { step, ticks } = ticker(engine, legs, sinkPort, pump);
  const m = await measure(step);
  const legTicks = (TICKS / PHASES) * LEGS; // each leg is served once per PHASES ticks
  const cpuMs = (m.cpu.user + m.cpu.system) / 1000;
  // (engine.stats: a C leg's counters are read from C)
  const received = legs.reduce((a, l) => a + engine.stats(l.id).packetsReceived, 0);
  const cLegs = engine.workerStats().cLegs;
  const r = {
    mode: kind ? `${mode} (${kind === 'uring-c' ? `uring-c, ${cLegs} legs in C` : rtpIoKind()})` : mode,
    ...(pump ? { packetsReceivedPerLegFrame: Number((received / ((ticks() / PHASES) * LEGS)).toFixed(3)), ring: rtpRingCounters() } : {}),
    legs: LEGS,
    ticks: TICKS,
    gcsPer10kTicks: Number(((m.gcs * 10000) / TICKS).toFixed(1)),
    gcKinds: m.kinds,
    allocatedKBPer10kTicks: Math.round((m.allocated * 10000) / TICKS / 1024),
    bytesPerLegTick: Number((m.allocated / legTicks).toFixed(1)),
    cpuUsPerLegFrame: Number(((cpuMs * 1000) / legTicks).toFixed(2)),
    /** the kernel's part of it (system time: the sockets' system calls and loopback delivery) */
    sysUsPerLegFrame: Number((m.cpu.system / legTicks).toFixed(2)),
    wallMs: Math.round(m.wall),
  };
  await engine.shutdown();
  pump?.stop();
  for (const line of m.sites) console.log(line);
  return r;
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'me-alloc-'));
  const prompt = path.join(dir, 'prompt.wav');
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', prompt, 'synth', '120', 'sine', '440']);
  const sink = await startSink();
  console.log(
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; node ${process.version}; ${LEGS} legs, ${TICKS} ticks of ${20 / PHASES} ms (${TICKS / PHASES} frames per leg)`,
  );
  try {
    for (const mode of MODES) console.log(JSON.stringify(await run(mode, prompt, sink.port)));
    for (const kind of WIRE_KINDS) console.log(JSON.stringify(await run('wire', prompt, sink.port, kind)));
  } finally {
    sink.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
