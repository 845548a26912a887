/**
 * Media streams benchmark: the call plane on loopback (sip-server + media-app node + control-api
 * with the media-streams attachment), sipp placing N calls whose far end talks a PCMU tone.
 *   source .data/env && npx tsx scripts/bench/streams/run.ts [--calls 20] [--seconds 10] [--rounds 3] [--encapsulation rtp]
 * 1. baseline: the N calls as plain RTP legs, no streams: delivery jitter of the legs' RTP (|gap - 20 ms|)
 *    and the process CPU over the window.
 * 2. streams: one media_stream WebSocket per call (through control-api's relay to the node): chunk
 *    delivery jitter at the clients, the legs' RTP jitter again, and the CPU over the same window.
 * The phases alternate --rounds times so that outside load falls on both. Streams per core = N / (extra CPU the streams cost, in cores). Everything (workers, node, control-
 * api, clients, the RTP peers) shares this process, so the CPU figure is an upper bound on the cost.
 * Writes dist/bench/streams.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
process.env.LOG_LEVEL ??= 'silent';
import os from 'node:os';
import { writeReport } from '../report';
import type WebSocket from 'ws';
import { killAllSipp, sleep } from '../../../testkit/media-app/harness';
import { truncateAll } from '../../../testkit/db';
import { accept, customerWithTrunk, placeCall, startStack, type PlacedCall } from '../../../testkit/streams/support';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const CALLS = Number(arg('calls', '20'));
const SECONDS = Number(arg('seconds', '10'));
const ENC = arg('encapsulation', 'rtp');
const ROUNDS = Number(arg('rounds', '3'));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
/** |gap - 20 ms| for consecutive arrivals inside [from, to]. */
function jitter(arrivals: number[], from: number, to: number): number[] {
  const xs = arrivals.filter((t) => t >= from && t <= to);
  const out: number[] = [];
  for (let i = 1; i < xs.length; i++) out.push(Math.abs(xs[i]! - xs[i - 1]! - 20));
  return out;
}

interface Window {
  cpuMs: number;
  ms: number;
  legJ: number[];
  streamJ: number[];
  delivered: number;
  streams: number;
}

async function window(calls: PlacedCall[], clients: { arrivals: number[] }[]): Promise<Window> {
  const cpu0 = process.cpuUsage();
  const from = performance.now();
  await sleep(SECONDS * 1000);
  const to = performance.now();
  const cpu = process.cpuUsage(cpu0);
  return {
    cpuMs: (cpu.user + cpu.system) / 1000,
    ms: to - from,
    legJ: calls.flatMap((c) => jitter(c.peer.arrivals, from, to)),
    streamJ: clients.flatMap((c) => jitter(c.arrivals, from, to)),
    delivered: clients.reduce((n, c) => n + c.arrivals.filter((t) => t >= from && t <= to).length, 0),
    streams: clients.length,
  };
}

/** Pooled figures of several windows of one phase. */
function summary(ws: Window[]) {
  const legJ = ws.flatMap((w) => w.legJ);
  const streamJ = ws.flatMap((w) => w.streamJ);
  const ms = ws.reduce((n, w) => n + w.ms, 0);
  const streams = ws[0]?.streams ?? 0;
  return {
    cores: ws.reduce((n, w) => n + w.cpuMs, 0) / ms,
    legP50: pct(legJ, 50),
    legP99: pct(legJ, 99),
    streamP50: pct(streamJ, 50),
    streamP99: pct(streamJ, 99),
    chunksPerSec: streams ? ws.reduce((n, w) => n + w.delivered, 0) / streams / (ms / 1000) : 0,
  };
}

async function main(): Promise<void> {
  await truncateAll();
  const stack = await startStack();
  const calls: PlacedCall[] = [];
  const sockets: WebSocket[] = [];
  try {
    const owner = await customerWithTrunk(stack.api);
    const hold = (SECONDS * 2 * ROUNDS + 60) * 1000;
    for (let i = 0; i < CALLS; i++) {
      calls.push(await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'sleep', option: { duration: hold } }, { type: 'hangup' }]));
    }
    // the phases alternate, ROUNDS times, so that load from elsewhere on the machine falls on both
    const baseW: Window[] = [];
    const streamW: Window[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(500);
      baseW.push(await window(calls, []));
      const clients: { arrivals: number[] }[] = [];
      for (const c of calls) {
        const ws = await accept(`${stack.base}/v1.0/calls/${c.callId}/media_stream?encapsulation=${ENC}&token=${owner.token}`);
        const rec = { arrivals: [] as number[] };
        ws.on('message', () => rec.arrivals.push(performance.now()));
        sockets.push(ws);
        clients.push(rec);
      }
      await sleep(500);
      streamW.push(await window(calls, clients));
      for (const ws of sockets.splice(0)) ws.close();
    }
    const base = summary(baseW);
    const streams = summary(streamW);
    const extra = Math.max(streams.cores - base.cores, 1e-6);
    const perCore = CALLS / extra;
    const f = (x: number) => x.toFixed(2);
    const md = `# Benchmark: media streams

Command: \`source .data/env && npx tsx scripts/bench/streams/run.ts --calls ${CALLS} --seconds ${SECONDS} --rounds ${ROUNDS} --encapsulation ${ENC}\`
Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, shared with other work; run ${new Date().toISOString()}.

${CALLS} calls placed by sipp through sip-server into one media-app node (1 media worker); each far end
talks a PCMU tone. The two phases alternate ${ROUNDS} times (${SECONDS} s windows each) on the same calls,\nin the same run; figures pool each phase's windows.
Jitter = |inter-arrival gap − 20 ms| per packet or chunk. CPU = the whole process (media worker thread,
media-app, control-api, the WebSocket clients and the RTP peers), in cores.

| phase | CPU (cores) | leg RTP jitter p50 / p99 (ms) | stream chunk jitter p50 / p99 (ms) | chunks/s per stream |
|---|---|---|---|---|
| baseline: ${CALLS} plain RTP legs | ${f(base.cores)} | ${f(base.legP50)} / ${f(base.legP99)} | – | – |
| ${CALLS} legs + ${CALLS} media streams (${ENC}) | ${f(streams.cores)} | ${f(streams.legP50)} / ${f(streams.legP99)} | ${f(streams.streamP50)} / ${f(streams.streamP99)} | ${f(streams.chunksPerSec)} |

- **Streams per core: ${perCore.toFixed(0)}** (${CALLS} streams cost ${f(extra)} extra cores over the baseline).
- **Stream jitter p99 / baseline leg jitter p99 = ${f(streams.streamP99 / Math.max(base.legP99, 0.01))}** (a stream crosses worker → node → relay WebSocket → control-api → client WebSocket).
- Leg jitter p99 with streams / without = ${f(streams.legP99 / Math.max(base.legP99, 0.01))} (streams must not disturb the calls' own RTP).
`;
    writeReport('streams', md);
  } finally {
    for (const ws of sockets) ws.terminate();
    for (const c of calls) c.peer.close();
    killAllSipp();
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
