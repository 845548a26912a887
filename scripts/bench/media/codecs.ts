/**
 * CPU per 20 ms frame of each codec of the media engine (media-engine/codecs/) and of the resampler,
 * next to a baseline measured in the same run: G.711 µ-law encode + decode of one 8 kHz frame (the
 * work every narrowband leg does today).
 *
 *   npx tsx scripts/bench/media/codecs.ts [--ms 400] [--no-write]      (ROWS=regex to run some rows only)
 *
 * Input is espeak-ng speech made at run time (sox, no dither) at 8, 16 and 48 kHz; decode rows decode
 * packets the same codec encoded from it. Row and baseline run in alternating ~2 ms rounds; each figure
 * is the fastest round (the least disturbed by other processes on a shared machine), the ratio is
 * row / baseline of those. "frames/core" = 20 ms / cost: how many such calls one core could make per
 * 20 ms tick doing nothing else (an upper bound, not a capacity). Writes dist/bench/codecs.md
 * (git-ignored; the figures go by hand into docs/benchmarks.md).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportPath } from '../report';
import { type Codec, createCodec, G711Codec, OpusCodec, Resampler } from '../../../media-engine/codecs';
import { nativeCodecs } from '../../../media-engine/native/codecs';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const BUDGET_MS = Number(arg('--ms') ?? 400);
const WRITE = !process.argv.includes('--no-write');

function speech(rate: number): Int16Array {
  const text = 'Thank you for calling. Please say the name of the person you wish to reach, or stay on the line.';
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '--stdout', text], { maxBuffer: 64 << 20 });
  const raw = execFileSync('sox', ['-D', '-t', 'wav', '-', '-r', String(rate), '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'raw', '-'], { input: wav, maxBuffer: 64 << 20 });
  const out = new Int16Array(raw.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = raw.readInt16LE(i * 2);
  return out;
}

/** The speech cut into frames of n samples (views, made once). */
function framesOf(x: Int16Array, n: number): Int16Array[] {
  const out: Int16Array[] = [];
  for (let k = 0; (k + 1) * n <= x.length; k++) out.push(x.subarray(k * n, (k + 1) * n));
  return out;
}

function calibrate(fn: (i: number) => void, ms: number): number {
  let n = 4;
  for (;;) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    if (Number(process.hrtime.bigint() - t) > ms * 1e6 || n > 1e8) return n;
    n *= 2;
  }
}

function timeOf(fn: (i: number) => void, n: number, from: number): number {
  const t = process.hrtime.bigint();
  for (let i = from; i < from + n; i++) fn(i);
  return Number(process.hrtime.bigint() - t) / n;
}

/** Alternating ~2 ms rounds of baseline and row; the fastest of each (ns per call). */
function measurePaired(base: (i: number) => void, fn: (i: number) => void): { ns: number; baseNs: number } {
  const nb = calibrate(base, 2);
  const nf = calibrate(fn, 2);
  const rounds = Math.max(20, Math.round(BUDGET_MS / 4));
  let ns = Infinity;
  let baseNs = Infinity;
  let i = 0;
  for (let r = 0; r < rounds; r++) {
    baseNs = Math.min(baseNs, timeOf(base, nb, i));
    ns = Math.min(ns, timeOf(fn, nf, i));
    i += nf;
  }
  return { ns, baseNs };
}

/** Packets `codec` makes of `frames` (for the decode rows). */
function packetsOf(codec: Codec, frames: Int16Array[]): Uint8Array[] {
  const buf = new Uint8Array(codec.maxPayloadBytes);
  return frames.map((f) => buf.slice(0, codec.encode(f, buf)));
}

type Row = (name: string, fn: (i: number) => void) => void;

/** G.711 µ-law and A-law: encode, decode, and decode / conceal at 50 % loss. */
function g711Rows(row: Row, pcm8: Int16Array[], out: Int16Array, bytes: Uint8Array): void {
  for (const law of ['PCMU', 'PCMA'] as const) {
    const c = new G711Codec(law);
    const pk = packetsOf(c, pcm8);
    row(`${law} encode`, (i) => void c.encode(pcm8[i % pcm8.length], bytes));
    row(`${law} decode`, (i) => void c.decode(pk[i % pk.length], out));
    row(`${law} 50 % loss: decode / conceal alternating`, (i) => void (i & 1 ? c.conceal(out) : c.decode(pk[i % pk.length], out)));
    c.close();
  }
}

/** G.722 (encode, decode, loss) and Opus at 16 and 48 kHz (encode by complexity, decode, FEC and PLC at 50 % loss). */
function widebandRows(row: Row, pcm16: Int16Array[], pcm48: Int16Array[], out: Int16Array, bytes: Uint8Array): void {
  const g = createCodec('G722');
  const gpk = packetsOf(g, pcm16);
  row('G.722 encode (16 kHz, 64 kbit/s)', (i) => void g.encode(pcm16[i % pcm16.length], bytes));
  row('G.722 decode', (i) => void g.decode(gpk[i % gpk.length], out));
  row('G.722 50 % loss: decode / conceal alternating', (i) => void (i & 1 ? g.conceal(out) : g.decode(gpk[i % gpk.length], out)));
  g.close();

  for (const cx of [0, 5, 10]) {
    const o = new OpusCodec({ complexity: cx });
    row(`Opus 16 kHz encode, complexity ${cx}, 24 kbit/s, FEC`, (i) => void o.encode(pcm16[i % pcm16.length], bytes));
    o.close();
  }
  const o16 = new OpusCodec();
  const opk = packetsOf(o16, pcm16);
  row('Opus 16 kHz decode', (i) => void o16.decode(opk[i % opk.length], out));
  // a lost frame k is rebuilt from packet k+1, then k+1 is decoded: the pair is two frames
  row('Opus 16 kHz 50 % loss: FEC recover / decode', (i) => void (i & 1 ? o16.decode(opk[i % opk.length], out) : o16.recover(opk[(i + 1) % opk.length], out)));
  row('Opus 16 kHz 50 % loss: decode / conceal (PLC)', (i) => void (i & 1 ? o16.conceal(out) : o16.decode(opk[i % opk.length], out)));
  o16.close();
  const o48 = new OpusCodec({ sampleRate: 48000 });
  const opk48 = packetsOf(o48, pcm48);
  row('Opus 48 kHz encode, complexity 5, 32 kbit/s, FEC', (i) => void o48.encode(pcm48[i % pcm48.length], bytes));
  row('Opus 48 kHz decode', (i) => void o48.decode(opk48[i % opk48.length], out));
  o48.close();
}

/** The resampler between 8, 16 and 48 kHz, each way. */
function resampleRows(row: Row, src: Record<number, Int16Array[]>, out: Int16Array): void {
  for (const [a, b] of [
    [8000, 16000],
    [16000, 8000],
    [16000, 48000],
    [48000, 16000],
    [8000, 48000],
    [48000, 8000],
  ]) {
    const r = new Resampler(a, b);
    const frames = src[a];
    row(`resample ${a / 1000}k → ${b / 1000}k (quality 5)`, (i) => void r.process(frames[i % frames.length], out));
    r.close();
  }
}

function tableLines(rows: Array<{ name: string; ns: number; ratio: number }>, baseBest: number): string[] {
  const pad = (s: string, w: number): string => s.padEnd(w);
  return [
    `| ${pad('row (one 20 ms frame)', 50)} | µs/frame (best) | × baseline (best) | frames/core |`,
    `|${'-'.repeat(52)}|----------------:|------------------:|------------:|`,
    `| ${pad('baseline: PCMU encode + decode', 50)} | ${(baseBest / 1000).toFixed(2).padStart(15)} | ${'1.0'.padStart(17)} | ${Math.floor(20e6 / baseBest)
      .toString()
      .padStart(11)} |`,
    ...rows.map(
      ({ name, ns, ratio }) =>
        `| ${pad(name, 50)} | ${(ns / 1000).toFixed(2).padStart(15)} | ${ratio.toFixed(1).padStart(17)} | ${Math.floor(20e6 / ns)
          .toString()
          .padStart(11)} |`,
    ),
  ];
}

/** The report: the table in its method and reading notes. */
function writeReport(table: string, opusVersion: string): void {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const when = new Date().toISOString().slice(0, 10);
  const load = os.loadavg()[0].toFixed(1);
  const md = `# media-engine codecs: CPU per frame

What one 20 ms frame costs to encode, decode or conceal in each codec of \`media-engine/codecs/\`, and to
resample, next to a baseline measured in the same run: G.711 µ-law encode + decode of one 8 kHz frame.
Opus, G.722 and the resampler run in the native module (libopus ${opusVersion.replace('libopus ', '')}, libspandsp,
libspeexdsp); G.711 is TypeScript.

Command:

\`\`\`
npx tsx scripts/bench/media/codecs.ts            # ~400 ms per row; --ms N to change, ROWS=regex to select (then nothing is written)
\`\`\`

Method: espeak-ng speech made at run time at 8, 16 and 48 kHz; decode rows decode the packets the same
codec made of it. Row and baseline run in alternating ~2 ms rounds so both see the same machine load;
each figure is the fastest round, the ratio is row / baseline of those. "frames/core" = 20 ms / cost,
an upper bound that ignores everything else a leg costs (sockets, jitter buffer, timers).

Run on ${when}, Node ${process.version}, ${os.cpus().length} × ${cpu}, load average ${load} at the end:

${table}

Reading the table:

- A transcoded G.722 leg costs encode + decode + the 16k ↔ 8k resampling when its peer is G.711; an
  Opus leg at complexity 5 costs its encode + decode (and resampling when its peer's rate differs).
  The per-leg socket and timer work (about 20 µs per leg-frame, docs/benchmarks.md) comes on top.
- Opus encode dominates everything; complexity is the knob (0 costs a quarter of 10 or less here).
- The loss rows are per frame over a stream losing every other frame (a lost frame alone is not a
  steady state: concealment fades to silence after a few frames, which costs nothing); subtract half
  the decode row to get a lost frame's own cost.
`;
  const file = reportPath('codecs');
  fs.writeFileSync(file, md);
  console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
}

function main(): void {
  if (!nativeCodecs) throw new Error('the native codec module is not built: bash scripts/build-native.sh');
  const pcm8 = framesOf(speech(8000), 160);
  const pcm16 = framesOf(speech(16000), 320);
  const pcm48 = framesOf(speech(48000), 960);
  const out = new Int16Array(960 * 3);
  const bytes = new Uint8Array(1275);

  const baseCodec = new G711Codec('PCMU');
  const base8 = packetsOf(baseCodec, pcm8);
  const base = (i: number): void => {
    baseCodec.encode(pcm8[i % pcm8.length], bytes);
    baseCodec.decode(base8[i % base8.length], out);
  };

  const only = process.env.ROWS ? new RegExp(process.env.ROWS, 'i') : null;
  const rows: Array<{ name: string; ns: number; ratio: number }> = [];
  let baseBest = Infinity;
  const row = (name: string, fn: (i: number) => void): void => {
    if (only && !only.test(name)) return;
    const m = measurePaired(base, fn);
    baseBest = Math.min(baseBest, m.baseNs);
    rows.push({ name, ns: m.ns, ratio: m.ns / m.baseNs });
    process.stderr.write(`${name}: ${(m.ns / 1000).toFixed(2)} µs\n`);
  };

  g711Rows(row, pcm8, out, bytes);
  widebandRows(row, pcm16, pcm48, out, bytes);
  resampleRows(row, { 8000: pcm8, 16000: pcm16, 48000: pcm48 }, out);
  baseCodec.close();

  const lines = tableLines(rows, baseBest);
  const table = lines.join('\n');
  console.log(table);
  if (!WRITE || only) return;
  writeReport(table, nativeCodecs.opusVersion);
}

main();
