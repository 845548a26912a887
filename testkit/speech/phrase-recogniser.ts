// A small isolated-phrase recogniser for the STT stand-ins (deepgram-server.ts): it knows a list of
// phrases by templates of them spoken by espeak-ng, and names an utterance by the nearest template
// under dynamic time warping of mel-cepstral features (12 cepstra of 20 mel bands, 32 ms windows
// every 10 ms, the utterance's mean removed so the line's gain and µ-law do not matter). An utterance
// farther than `maxDistance` from every template is heard as nothing (the vendor returns an empty
// transcript), so words outside the list are not turned into one of them. The templates are made by
// the recogniser itself from the phrases' text (espeak-ng's default voice), so a caller who says them
// in another voice (speed, pitch) is recognised, not looked up.
import { execFileSync } from 'node:child_process';

const RATE = 8000;
const WIN = 256;
const HOP = 80;
const BANDS = 20;
const CEPS = 12;

/** Hann window and the mel filterbank (100-3800 Hz) on a 256-point spectrum at 8 kHz. */
const HANN = Float64Array.from({ length: WIN }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (WIN - 1)));
const FILTERS: Float64Array[] = (() => {
  const mel = (f: number) => 2595 * Math.log10(1 + f / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const lo = mel(100);
  const hi = mel(3800);
  const edges = Array.from({ length: BANDS + 2 }, (_, i) => (hz(lo + ((hi - lo) * i) / (BANDS + 1)) * WIN) / RATE);
  return Array.from({ length: BANDS }, (_, b) => {
    const f = new Float64Array(WIN / 2 + 1);
    for (let k = 0; k < f.length; k++) {
      const [l, c, r] = [edges[b]!, edges[b + 1]!, edges[b + 2]!];
      f[k] = k < l || k > r ? 0 : k <= c ? (k - l) / Math.max(1e-9, c - l) : (r - k) / Math.max(1e-9, r - c);
    }
    return f;
  });
})();

/** The twiddle factors of each butterfly length (computed once: the benchmarks recognise thousands of utterances). */
const TWIDDLES = new Map<number, { cos: Float64Array; sin: Float64Array }>();
function twiddles(len: number): { cos: Float64Array; sin: Float64Array } {
  let t = TWIDDLES.get(len);
  if (!t) {
    const a = (-2 * Math.PI) / len;
    t = { cos: Float64Array.from({ length: len / 2 }, (_, k) => Math.cos(a * k)), sin: Float64Array.from({ length: len / 2 }, (_, k) => Math.sin(a * k)) };
    TWIDDLES.set(len, t);
  }
  return t;
}

/** The DCT of the log mel bands: DCT[n - 1][b] = cos(π n (b + ½) / BANDS). */
const DCT = Array.from({ length: CEPS }, (_, n) => Float64Array.from({ length: BANDS }, (_, b) => Math.cos((Math.PI * (n + 1) * (b + 0.5)) / BANDS)));

/** In-place radix-2 FFT of (re, im), length a power of two. */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const tw = twiddles(len);
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = tw.cos[k]!;
        const wi = tw.sin[k]!;
        const xr = re[i + k + len / 2]! * wr - im[i + k + len / 2]! * wi;
        const xi = re[i + k + len / 2]! * wi + im[i + k + len / 2]! * wr;
        re[i + k + len / 2] = re[i + k]! - xr;
        im[i + k + len / 2] = im[i + k]! - xi;
        re[i + k] = re[i + k]! + xr;
        im[i + k] = im[i + k]! + xi;
      }
    }
  }
}

/** Mel cepstra (c1..c12) of 8 kHz samples, one vector per 10 ms, the utterance mean removed. */
export function cepstra(x: Int16Array): Float64Array[] {
  return withoutMean(rawCepstra(x, []));
}

/** The cepstra of `x`'s 10 ms hops after the `done.length` already in `done` (appended to it), mean not removed. */
function rawCepstra(x: Int16Array, done: Float64Array[]): Float64Array[] {
  const re = new Float64Array(WIN);
  const im = new Float64Array(WIN);
  const logMel = new Float64Array(BANDS);
  for (let o = done.length * HOP; o + WIN <= x.length; o += HOP) {
    for (let i = 0; i < WIN; i++) {
      re[i] = x[o + i]! * HANN[i]!;
      im[i] = 0;
    }
    fft(re, im);
    for (let b = 0; b < BANDS; b++) {
      let e = 0;
      const f = FILTERS[b]!;
      for (let k = 0; k <= WIN / 2; k++) if (f[k]) e += f[k]! * (re[k]! * re[k]! + im[k]! * im[k]!);
      logMel[b] = Math.log(e + 1);
    }
    const c = new Float64Array(CEPS);
    for (let n = 0; n < CEPS; n++) {
      let s = 0;
      const d = DCT[n]!;
      for (let b = 0; b < BANDS; b++) s += logMel[b]! * d[b]!;
      c[n] = s;
    }
    done.push(c);
  }
  return done;
}

/** Copies of the vectors with their mean removed. */
function withoutMean(raw: Float64Array[]): Float64Array[] {
  if (!raw.length) return [];
  const mean = new Float64Array(CEPS);
  for (const c of raw) for (let i = 0; i < CEPS; i++) mean[i]! += c[i]! / raw.length;
  return raw.map((c) => c.map((v, i) => v - mean[i]!));
}

/** Feature vectors in one array (vector i at i · CEPS): the DTW's inner loop reads memory in order. */
function flat(v: Float64Array[]): Float64Array {
  const out = new Float64Array(v.length * CEPS);
  v.forEach((c, i) => out.set(c, i * CEPS));
  return out;
}

/**
 * DTW cost of `u` (n vectors, flat) against template `t` (m vectors, flat) per step of the path.
 * `openEnd`: `u` may match only the start of `t` (an utterance still going on: the interim guess).
 */
function dtwFlat(u: Float64Array, n: number, t: Float64Array, m: number, openEnd: boolean): number {
  if (!n || !m) return Infinity;
  // two rows, swapped each step (no allocation per row)
  let prev = new Float64Array(m + 1).fill(Infinity);
  let prevLen = new Float64Array(m + 1);
  let cur = new Float64Array(m + 1);
  let curLen = new Float64Array(m + 1);
  prev[0] = 0;
  for (let i = 1; i <= n; i++) {
    cur.fill(Infinity);
    curLen.fill(0);
    const ui = (i - 1) * CEPS;
    for (let j = 1; j <= m; j++) {
      const tj = (j - 1) * CEPS;
      let s = 0;
      for (let k = 0; k < CEPS; k++) {
        const e = u[ui + k]! - t[tj + k]!;
        s += e * e;
      }
      // steps (i-1, j-1), (i-1, j), (i, j-1)
      let best = prev[j - 1]!;
      let len = prevLen[j - 1]!;
      if (prev[j]! < best) {
        best = prev[j]!;
        len = prevLen[j]!;
      }
      if (cur[j - 1]! < best) {
        best = cur[j - 1]!;
        len = curLen[j - 1]!;
      }
      cur[j] = best + Math.sqrt(s);
      curLen[j] = len + 1;
    }
    const r = prev;
    prev = cur;
    cur = r;
    const l = prevLen;
    prevLen = curLen;
    curLen = l;
  }
  if (!openEnd) return prev[m]! / prevLen[m]!;
  let best = Infinity;
  for (let j = Math.ceil(m / 3); j <= m; j++) best = Math.min(best, prev[j]! / prevLen[j]!);
  return best;
}

/** espeak-ng speech at 8 kHz, its leading and trailing silence cut. */
export function espeakSamples(text: string, opts: { speed?: number; pitch?: number } = {}): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', String(opts.speed ?? 160), '-p', String(opts.pitch ?? 50), '--stdout', text]);
  const raw = execFileSync('sox', ['-t', 'wav', '-', '-r', '8000', '-c', '1', '-e', 'signed', '-b', '16', '-t', 'raw', '-'], { input: wav });
  const x = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  let first = 0;
  let last = x.length;
  while (first < x.length && Math.abs(x[first]!) < 300) first++;
  while (last > first && Math.abs(x[last - 1]!) < 300) last--;
  return x.slice(first, last);
}

export interface Recognised {
  /** the phrase, '' when nothing is near enough */
  text: string;
  /** the DTW cost of the best template */
  distance: number;
}

/** The distance past which a phrase is heard as nothing, set on clean espeak-ng speech. */
export const DEFAULT_MAX_DISTANCE = 14;

export class PhraseRecogniser {
  private readonly templates: { text: string; f: Float64Array; n: number }[];

  /** `phrases`: what can be recognised (the transcript is the phrase as given). */
  constructor(
    phrases: readonly string[],
    readonly maxDistance = DEFAULT_MAX_DISTANCE,
  ) {
    this.templates = phrases.map((text) => {
      const f = cepstra(espeakSamples(text.charAt(0).toUpperCase() + text.slice(1) + '.'));
      return { text, f: flat(f), n: f.length };
    });
  }

  /** The phrase nearest to `x` (8 kHz samples of one utterance); `partial`: the utterance goes on. */
  recognise(x: Int16Array, partial = false): Recognised {
    return this.nearest(cepstra(x), partial);
  }

  /**
   * One utterance recognised as it grows (the interims, then the final): each call's `x` is the last
   * one's samples and more, so only the new 10 ms hops are analysed (a stand-in matching every 100 ms
   * of a long utterance analysed it whole each time). Same answers as `recognise`.
   */
  utterance(): (x: Int16Array, partial?: boolean) => Recognised {
    const raw: Float64Array[] = [];
    return (x, partial = false) => this.nearest(withoutMean(rawCepstra(x, raw)), partial);
  }

  private nearest(c: Float64Array[], partial: boolean): Recognised {
    const u = flat(c);
    let best: Recognised = { text: '', distance: Infinity };
    for (const t of this.templates) {
      const d = dtwFlat(u, c.length, t.f, t.n, partial);
      if (d < best.distance) best = { text: t.text, distance: d };
    }
    return best.distance <= this.maxDistance ? best : { text: '', distance: best.distance };
  }
}
