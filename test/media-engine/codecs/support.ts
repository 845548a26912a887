// Signals and measurements for the codec tests: espeak-ng speech at any rate (the dsp fixtures'
// espeak() gives 8 kHz only, too narrow for wideband codecs), tones, levels, aligned SNR, gaps.
import { execFileSync } from 'node:child_process';
import type { Codec } from '../../../media-engine/codecs';

const speechCache = new Map<number, Int16Array>();

/** A few seconds of espeak-ng speech converted by sox to `rate` Hz, 16-bit mono (no dither: the same samples every run). */
export function speechAt(rate: number): Int16Array {
  const hit = speechCache.get(rate);
  if (hit) return hit;
  const text = 'Thank you for calling. Please say the name of the person you wish to reach, or stay on the line.';
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '--stdout', text], { maxBuffer: 64 << 20 });
  const raw = execFileSync('sox', ['-D', '-t', 'wav', '-', '-r', String(rate), '-b', '16', '-c', '1', '-e', 'signed-integer', '-t', 'raw', '-'], { input: wav, maxBuffer: 64 << 20 });
  const out = new Int16Array(raw.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = raw.readInt16LE(i * 2);
  speechCache.set(rate, out);
  return out;
}

export function tone(rate: number, freq: number, samples: number, amplitude = 8000): Int16Array {
  const x = new Int16Array(samples);
  for (let i = 0; i < samples; i++) x[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / rate));
  return x;
}

export function add(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Math.max(-32768, Math.min(32767, a[i] + (b[i] ?? 0)));
  return out;
}

/** Level of one frequency in x[from..to), dB re 1 LSB of amplitude (Goertzel, Hann window). */
export function toneDb(x: Int16Array, rate: number, freq: number, from = 0, to = x.length): number {
  const n = to - from;
  const c = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
    const s = x[from + i] * w + c * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  const power = s1 * s1 + s2 * s2 - c * s1 * s2;
  return 20 * Math.log10((4 * Math.sqrt(Math.max(power, 0))) / n + 1e-6); // 4/n: amplitude with Hann's 0.5 gain
}

export function rmsOf(x: Int16Array, from = 0, to = x.length): number {
  let e = 0;
  for (let i = from; i < to; i++) e += x[i] * x[i];
  return Math.sqrt(e / Math.max(1, to - from));
}

/**
 * SNR of `got` against `ref` in dB at the delay (0..maxLag samples) where they match best, over
 * ref[skip..]: the codec's own delay is not counted as error.
 */
export function alignedSnr(ref: Int16Array, got: Int16Array, maxLag: number, skip: number): { snr: number; lag: number } {
  let best = { snr: -Infinity, lag: 0 };
  for (let lag = 0; lag <= maxLag; lag++) {
    let sig = 0;
    let err = 0;
    for (let i = skip; i + lag < got.length && i < ref.length; i++) {
      const d = ref[i] - got[i + lag];
      sig += ref[i] * ref[i];
      err += d * d;
    }
    const snr = 10 * Math.log10(sig / Math.max(err, 1));
    if (snr > best.snr) best = { snr, lag };
  }
  return best;
}

/**
 * Encodes `pcm` frame by frame and decodes it again. Frames whose index is in `lost` are not decoded:
 * with `fec` the gap is rebuilt by recover() from the next packet, else conceal() fills it.
 */
export function roundTrip(codec: Codec, pcm: Int16Array, lost: ReadonlySet<number> = new Set(), fec = false): Int16Array {
  const N = codec.frameSamples;
  const frames = Math.floor(pcm.length / N);
  const packets: Uint8Array[] = [];
  const buf = new Uint8Array(codec.maxPayloadBytes);
  for (let k = 0; k < frames; k++) {
    const bytes = codec.encode(pcm.subarray(k * N, (k + 1) * N), buf);
    packets.push(buf.slice(0, bytes));
  }
  const out = new Int16Array(frames * N);
  const frame = new Int16Array(N);
  for (let k = 0; k < frames; k++) {
    let n: number;
    if (!lost.has(k)) n = codec.decode(packets[k], frame);
    else if (fec && k + 1 < frames && !lost.has(k + 1)) n = codec.recover(packets[k + 1], frame);
    else n = codec.conceal(frame);
    if (n !== N) throw new Error(`frame ${k}: ${n} samples, expected ${N}`);
    out.set(frame, k * N);
  }
  return out;
}

/**
 * The longest run, in ms, of `windowMs` windows where `ref` is sounding (RMS > 300) but `got`, at
 * `lag`, has fallen under a tenth of ref's RMS there: audio the listener lost.
 */
export function longestGapMs(ref: Int16Array, got: Int16Array, rate: number, lag: number, windowMs = 5): number {
  const w = Math.round((rate * windowMs) / 1000);
  let run = 0;
  let longest = 0;
  for (let i = 0; i + w + lag <= got.length && i + w <= ref.length; i += w) {
    const r = rmsOf(ref, i, i + w);
    if (r > 300 && rmsOf(got, i + lag, i + lag + w) < r / 10) longest = Math.max(longest, ++run);
    else run = 0;
  }
  return longest * windowMs;
}

/** Frame indexes to drop: about `percent` % of `frames`, seeded, never the first `from`. */
export function lossPattern(frames: number, percent: number, seed = 7, from = 10): Set<number> {
  let x = seed >>> 0 || 1;
  const lost = new Set<number>();
  for (let k = from; k < frames; k++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    if (x / 0xffffffff < percent / 100) lost.add(k);
  }
  return lost;
}

/** A voiced-vowel-like periodic signal: 150 Hz and its harmonics up to `top` Hz, falling 6 dB/octave. */
export function vowel(rate: number, samples: number, top = 3400, amplitude = 6000): Int16Array {
  const x = new Int16Array(samples);
  const f0 = 150;
  for (let i = 0; i < samples; i++) {
    let v = 0;
    for (let h = 1; h * f0 <= top; h++) v += Math.sin((2 * Math.PI * h * f0 * i) / rate) / h;
    x[i] = Math.round(amplitude * 0.6 * v);
  }
  return x;
}
