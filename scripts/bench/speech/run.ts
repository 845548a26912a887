/**
 * Speaking first-audio latency: POST /speakings/{id}/say → the first RTP packet carrying speech at
 * the caller. The whole path runs on loopback: control-api (in process, supertest) → Postgres (say
 * number) → Redis pub/sub to the node (and BullMQ, the reliable copy) → media-app → embedded TTS (espeak-ng + sox, every text new so nothing is
 * cached) → audio fork → media worker → RTP → a UDP socket standing in for the caller's phone.
 * Baseline in the same run: espeak-ng + sox synthesizing the same texts directly (what the embedded
 * TTS costs by itself).
 *   source .data/env && npx tsx scripts/bench/speech/run.ts [--says 60]
 * Writes dist/bench/speech.md (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
process.env.LOG_LEVEL ??= 'silent';
import { execFile, spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeReport } from '../report';
import { promisify } from 'node:util';
import { killAllSipp, sipp, uacWaitsForBye, until } from '../../../testkit/media-app/harness';
import { truncateAll } from '../../../testkit/db';
import { api, inboundSetup, progressingCall, startStack } from '../../../testkit/speech/support';
import { speakingProbe, type SayTiming } from '../../../media-app/speech/speaking';
import { espeakPool } from '../../../media-engine/tts/espeak-pool';

const run = promisify(execFile);
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SAYS = arg('says', 60);
/** busy-looping processes running through the whole measurement (baseline included): "at load" */
const LOAD = arg('load', 0);
/** --cold: no warm espeak-ng process (each say starts its own), to show what the pool saves */
const COLD = process.argv.includes('--cold');
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
const textFor = (i: number) => `Number ${i}, ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}.`;

/**
 * The caller's RTP socket, in a thread of its own (a phone is not slowed by the server's event
 * loop): the arrival time of every packet whose PCMU payload is speech-loud, on this thread's clock.
 */
const SINK_WORKER = `
const dgram = require('node:dgram');
const { parentPort } = require('node:worker_threads');
const ulaw = new Int16Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff, e = (u >> 4) & 7, s = (((u & 0x0f) << 3) + 0x84) << e;
  ulaw[i] = u & 0x80 ? -(s - 0x84) : s - 0x84;
}
const sock = dgram.createSocket('udp4');
sock.on('message', (buf) => {
  if (buf.length < 172 || (buf[1] & 0x7f) !== 0) return;
  let sum = 0;
  for (let i = 12; i < buf.length; i++) sum += Math.abs(ulaw[buf[i]]);
  if (sum / (buf.length - 12) > 300) parentPort.postMessage(performance.timeOrigin + performance.now());
});
sock.bind(0, '127.0.0.1', () => parentPort.postMessage({ port: sock.address().port }));
parentPort.on('message', () => sock.close(() => process.exit(0)));
`;

async function voicedSink(): Promise<{ port: number; voiced: number[]; close(): void }> {
  const w = new Worker(SINK_WORKER, { eval: true });
  const voiced: number[] = [];
  const port = await new Promise<number>((resolve) =>
    w.on('message', (m: number | { port: number }) => {
      if (typeof m === 'number') voiced.push(m - performance.timeOrigin);
      else resolve(m.port);
    }),
  );
  return { port, voiced, close: () => w.postMessage('close') };
}

async function synthBaseline(text: string, dir: string, i: number): Promise<number> {
  const t0 = performance.now();
  const wav = path.join(dir, `b${i}.wav`);
  await run('sh', ['-c', `espeak-ng -v en-us -s 165 --stdout "$1" | sox -t wav - -r 8000 -b 16 -c 1 -e signed-integer "$2"`, 'sh', text, wav]);
  return performance.now() - t0;
}

async function main(): Promise<void> {
  await truncateAll();
  const s = await startStack();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-speech-'));
  const sink = await voicedSink();
  const latencies: number[] = [];
  const httpMs: number[] = [];
  const baseline: number[] = [];
  const timings = new Map<number, SayTiming>();
  const parts = { arrive: [] as number[], synth: [] as number[], engine: [] as number[] };
  const sources: Record<string, number> = {};
  speakingProbe.on('first-audio', (t: SayTiming) => timings.set(t.seq, t));
  if (COLD) espeakPool.close();
  const burners = Array.from({ length: LOAD }, () => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  try {
    const { f, number } = await inboundSetup(s, [{ type: 'answer' }, { type: 'sleep', option: { duration: 600_000 } }, { type: 'hangup' }]);
    const a = api(s.t, f);
    const caller = sipp(
      uacWaitsForBye(`${number}@127.0.0.1:${s.p.sipPort}`, '+15550009999', sink.port).replace('timeout="20000"', 'timeout="600000"'),
      [`127.0.0.1:${s.p.sipPort}`, '-i', '127.0.0.1', '-m', '1'],
      { killAfterMs: 600_000 },
    );
    const call = await progressingCall(s, f.customer.id);
    const id = (await a.post('/speakings', { reference_type: 'call', reference_id: call.id })).body.id as string;
    await until(async () => (await a.get(`/speakings/${id}`)).body.status === 'active', 10_000, 'active');
    for (let i = 0; i < 3; i++) await a.post(`/speakings/${id}/say`, { text: `warm up ${i}` });
    await new Promise((r) => setTimeout(r, 4000));
    for (let i = 0; i < SAYS; i++) {
      const text = textFor(i + 100);
      baseline.push(await synthBaseline(textFor(i + 5000), dir, i));
      const before = sink.voiced.length;
      const t0 = performance.now();
      const r = await a.post(`/speakings/${id}/say`, { text });
      httpMs.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`say: ${r.status} ${JSON.stringify(r.body)}`);
      const first = await until(() => (sink.voiced.length > before ? sink.voiced[before]! : null), 5000, 'speech');
      latencies.push(first - t0);
      const seq = r.body.say_count ?? (await s.t.ctx.db('speakings').where({ id }).first())!.say_count;
      const tm = timings.get(Number(seq));
      if (tm) {
        parts.arrive.push(tm.arrivedAt - t0);
        parts.synth.push(tm.firstAudioAt - tm.arrivedAt);
        parts.engine.push(first - tm.firstAudioAt);
        sources[tm.source] = (sources[tm.source] ?? 0) + 1;
      }
      // wait until this text has been heard to its end (no voiced packet for 400 ms)
      await until(() => performance.now() - sink.voiced[sink.voiced.length - 1]! > 400, 10_000, 'silence');
    }
    await a.post(`/speakings/${id}/stop`);
    await a.post(`/calls/${call.id}/hangup`);
    await caller.done;
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    sink.close();
    killAllSipp();
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  report({ latencies, httpMs, baseline }, parts, sources);
}

/** The run's figures against the baseline, where the time goes, printed and written to the report. */
function report(m: { latencies: number[]; httpMs: number[]; baseline: number[] }, parts: { arrive: number[]; synth: number[]; engine: number[] }, sources: Record<string, number>): void {
  const { latencies, httpMs, baseline } = m;
  const r = (x: number) => Math.round(x * 10) / 10;
  const row = {
    says: latencies.length,
    p50: r(pct(latencies, 50)),
    p99: r(pct(latencies, 99)),
    max: r(Math.max(...latencies)),
    http50: r(pct(httpMs, 50)),
    base50: r(pct(baseline, 50)),
    base99: r(pct(baseline, 99)),
  };
  const ratio = r(row.p99 / row.base99);
  const ratio50 = r(row.p50 / row.base50);
  const part = (xs: number[]) => `${r(pct(xs, 50))} / ${r(pct(xs, 99))}`;
  const mode = `${COLD ? 'cold (no warm process)' : 'warm pool'}${LOAD ? `, ${LOAD} busy loops` : ''}`;
  const src = Object.entries(sources)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    JSON.stringify({ mode, ...row, ratio_p99_to_synth_p99: ratio, ratio_p50_to_synth_p50: ratio50, arrive: part(parts.arrive), synth: part(parts.synth), engine: part(parts.engine), sources }),
  );
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  const md = `# Speech benchmark: speaking first-audio latency

\`POST /speakings/{id}/say\` → the first RTP packet carrying speech at the caller, on one live call (sipp as the
caller, its RTP read by a UDP socket in a thread of its own, as a phone would, unslowed by the server's event loop). Path: control-api in process (supertest) → Postgres (say number)
→ Redis pub/sub to the node (and BullMQ, the reliable copy) → media-app → embedded TTS (espeak-ng streamed from a process started ahead of time, resampled in process;
every text is new, so the in-memory cache never answers) → audio fork → media worker → RTP. "First speech" = first
PCMU packet with mean |sample| > 300.

Baseline (same run, same machine): \`espeak-ng | sox\` synthesizing texts of the same shape to a file, i.e. what the
embedded TTS cost before it streamed.

\`\`\`
source .data/env
npx tsx scripts/bench/speech/run.ts            # --says 60; --load N: N busy loops run throughout; --cold: no warm pool
\`\`\`

## Latest run (${mode})

| says | first audio p50 ms | p99 ms | max ms | say HTTP p50 ms | baseline synth p50 / p99 ms | ratio p50 / synth p50 | ratio p99 / synth p99 | target |
|---|---|---|---|---|---|---|---|---|
| ${row.says} | **${row.p50}** | **${row.p99}** | ${row.max} | ${row.http50} | ${row.base50} / ${row.base99} | ${ratio50} | ${ratio} | p99 < 150 ms: ${row.p99 < 150 ? 'met' : 'NOT met'} |

Where the time goes (p50 / p99 ms): say → text at the session (HTTP, Postgres, then Redis pub/sub; the BullMQ command is the reliable copy) **${part(parts.arrive)}**;
session → first audio handed to the engine (synthesis start-up and first block) **${part(parts.synth)}**;
engine → first voiced RTP packet (waiting for the next 20 ms tick, mixing, sending) **${part(parts.engine)}**.
Audio sources: ${src || 'n/a'}.

Machine: 2 shared cores, load average ${load} at the end of the run (other jobs share the cores).
`;
  writeReport('speech', md);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
