/**
 * Per-frame cost of the media-engine DSP modules (one 20 ms frame = 160 samples at 8 kHz),
 * each next to a baseline measured in the same run: a plain loop summing 160 samples.
 *
 *   npx tsx scripts/bench/media-dsp/run.ts [--ms 400]      (ROWS=regex to run some rows only)
 *
 * The echo canceller rows need the native codec module (scripts/build-native.sh).
 *
 * Module and baseline run in alternating ~2 ms rounds; each figure is the fastest round (the least
 * disturbed by other processes on a shared machine) and the ratio is module / baseline of those.
 * "streams/core" = how many such per-frame calls fit in one core's 20 ms (20e6 ns / cost), an upper
 * bound that ignores everything else the engine does.
 */
import { DtmfDetector } from '../../../media-engine/dsp/dtmf-detector';
import { BeepDetector } from '../../../media-engine/dsp/beep-detector';
import { AnsweringMachineDetector } from '../../../media-engine/dsp/amd';
import { createVad, EnergyVad } from '../../../media-engine/dsp/vad';
import { MixBus } from '../../../media-engine/dsp/mix';
import { ToneSource } from '../../../media-engine/dsp/tones';
import { EchoCanceller } from '../../../media-engine/dsp/echo-canceller';

const msArg = process.argv.indexOf('--ms');
const BUDGET_MS = msArg > 0 ? Number(process.argv[msArg + 1]) : 400;

/** A bank of varied frames (noise with a voice-like envelope) so branches are not all predictable. */
function frames(count: number, seed = 1): Int16Array[] {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
  return Array.from({ length: count }, (_, k) => {
    const f = new Int16Array(160);
    const amp = 2000 + 1500 * Math.sin(k / 3);
    for (let i = 0; i < 160; i++) f[i] = Math.round(amp * (0.6 * Math.sin((2 * Math.PI * 220 * (k * 160 + i)) / 8000) + 0.4 * rnd()));
    return f;
  });
}

/** Calls of fn needed to fill about `ms` milliseconds. */
function calibrate(fn: (i: number) => void, ms: number): number {
  let n = 50;
  for (;;) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    if (Number(process.hrtime.bigint() - t) > ms * 1e6 || n > 1e8) return n;
    n *= 2;
  }
}

function timeOf(fn: (i: number) => void, n: number): number {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t) / n;
}

/**
 * Alternating short rounds (~2 ms): baseline, module, baseline, module…, so both are sampled over
 * the same stretch of machine load. The fastest round of each is the one least disturbed by other
 * processes; the ratio is module-best / baseline-best.
 */
function measurePaired(base: (i: number) => void, fn: (i: number) => void): { ns: number; baseNs: number; ratio: number } {
  const nb = calibrate(base, 2);
  const nf = calibrate(fn, 2);
  const rounds = Math.max(20, Math.round(BUDGET_MS / 4));
  let ns = Infinity;
  let baseNs = Infinity;
  for (let r = 0; r < rounds; r++) {
    baseNs = Math.min(baseNs, timeOf(base, nb));
    ns = Math.min(ns, timeOf(fn, nf));
  }
  return { ns, baseNs, ratio: ns / baseNs };
}

type Row = (name: string, fn: (i: number) => void, divide?: number) => void;

async function main(): Promise<void> {
  const bank = frames(256);
  let sink = 0;
  const rows: Array<{ name: string; ns: number; ratio: number }> = [];
  const base = (i: number) => {
    const f = bank[i & 255];
    let s = 0;
    for (let k = 0; k < 160; k++) s += f[k];
    sink += s;
  };
  const only = process.env.ROWS ? new RegExp(process.env.ROWS, 'i') : null;
  let baseBest = Infinity;
  const row: Row = (name, fn, divide = 1) => {
    if (only && !only.test(name)) return;
    const m = measurePaired(base, fn);
    baseBest = Math.min(baseBest, m.baseNs);
    rows.push({ name, ns: m.ns / divide, ratio: m.ratio / divide });
  };
  await detectorRows(row, bank);
  mixRows(row, bank);
  echoRows(row, bank);
  printTable(rows, baseBest);
  if (sink === 42) console.log(''); // keep the baseline from being optimised away
}

/** The per-frame detectors and generators: DTMF, beep, VAD (fvad and energy), AMD, the tone generator. */
async function detectorRows(row: Row, bank: Int16Array[]): Promise<void> {
  const tone = new Int16Array(160);
  const toneBank = Array.from({ length: 64 }, () => new Int16Array(160));
  const src = new ToneSource({ segments: [{ freqs: [1000], ms: 1000 }], repeat: true });
  for (const f of toneBank) src.readFrame(f);
  const dtmf = new DtmfDetector();
  row('DTMF detector (voice-like frames)', (i) => void dtmf.process(bank[i & 255]));
  const beep = new BeepDetector();
  row('beep detector (voice-like frames)', (i) => void beep.process(bank[i & 255]));
  const beep2 = new BeepDetector();
  row('beep detector (1 kHz tone frames)', (i) => void beep2.process(toneBank[i & 63]));
  const fvad = await createVad({ engine: 'fvad' });
  row('VAD fvad-wasm', (i) => void fvad.process(bank[i & 255]));
  const evad = new EnergyVad();
  row('VAD energy fallback', (i) => void evad.process(bank[i & 255]));
  // AMD decides within 250 frames and then idles, so a fresh detector every 100 frames (cost included).
  let amd = new AnsweringMachineDetector({ vad: fvad, maximumNumberOfWords: 1e9, greeting: 1e9, totalAnalysisTime: 1e9 });
  row('AMD (fvad + app_amd timers)', (i) => {
    if (i % 100 === 0) amd = new AnsweringMachineDetector({ vad: fvad, maximumNumberOfWords: 1e9, greeting: 1e9, totalAnalysisTime: 1e9 });
    amd.process(bank[i & 255]);
  });
  row('tone generator (1 frame)', () => void src.readFrame(tone));
  fvad.close();
}

/** The conference mix per participant at 3, 10 and 100 parties. */
function mixRows(row: Row, bank: Int16Array[]): void {
  for (const n of [3, 10, 100]) {
    const bus = new MixBus({ maxParticipants: n });
    const slots = Array.from({ length: n }, () => bus.join());
    for (let k = 0; k < 10; k++) bus.mix(); // past the fade-in
    row(
      `N-1 mix per participant (${n} parties)`,
      (i) => {
        for (let s = 0; s < n; s++) bus.input(slots[s], bank[(i + s) & 255]);
        bus.mix();
      },
      n,
    );
  }
}

/**
 * The leg's echo canceller (speexdsp MDF) as ai_talk runs it: far = what was sent, near = its echo 7 frames
 * later at -6 dB plus other audio; 16 kHz frames are two 8 kHz ones side by side.
 */
function echoRows(row: Row, bank: Int16Array[]): void {
  const near = bank.map((f, k) => Int16Array.from(f, (v, j) => (v >> 1) + (bank[(k + 251) & 255][j] >> 2)));
  const wide = (b: Int16Array[]) => Array.from({ length: 128 }, (_, k) => Int16Array.from([...b[2 * k], ...b[2 * k + 1]]));
  const [farW, nearW] = [wide(bank), wide(near)];
  const aecOut = new Int16Array(320);
  for (const [name, rate, tailMs, residualDb] of [
    ['echo canceller 8 kHz, 500 ms tail', 8000, 500, 0],
    ['echo canceller 8 kHz, 300 ms tail', 8000, 300, 0],
    ['echo canceller 8 kHz, 500 ms + residual', 8000, 500, 30],
    ['echo canceller 16 kHz, 500 ms tail', 16000, 500, 0],
  ] as const) {
    const aec = new EchoCanceller({ rate, tailMs, residualDb });
    const out = aecOut.subarray(0, rate / 50);
    if (rate === 8000) row(name, (i) => aec.process(near[i & 255], bank[i & 255], out));
    else row(name, (i) => aec.process(nearW[i & 127], farW[i & 127], out));
    aec.close();
  }
}

function printTable(rows: Array<{ name: string; ns: number; ratio: number }>, baseBest: number): void {
  const pad = (s: string, w: number) => s.padEnd(w);
  console.log(`media-engine DSP per-frame cost (node ${process.version}, ~${BUDGET_MS} ms per row)\n`);
  console.log(`| ${pad('module', 40)} | ns/frame (best) |   × baseline (best) | streams/core |`);
  console.log(`|${'-'.repeat(42)}|----------------:|--------------------:|-------------:|`);
  console.log(
    `| ${pad('baseline: sum 160 samples', 40)} | ${baseBest.toFixed(0).padStart(15)} | ${'1.0'.padStart(19)} | ${Math.floor(20e6 / baseBest)
      .toString()
      .padStart(12)} |`,
  );
  for (const { name, ns, ratio } of rows) {
    console.log(
      `| ${pad(name, 40)} | ${ns.toFixed(0).padStart(15)} | ${ratio.toFixed(1).padStart(19)} | ${Math.floor(20e6 / ns)
        .toString()
        .padStart(12)} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
