/**
 * Tone generators as frame sources: beep, ringback cadences, DTMF digits and silence.
 * Oscillators keep their phase across frames so tones have no discontinuities at frame edges.
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type Frame, type FrameSource } from './frame';

/** Local copies: imported bindings compile to getters under some loaders, too slow in hot loops. */
const N = FRAME_SAMPLES;
const RATE = SAMPLE_RATE;

/** One step of a cadence: these frequencies (empty = silence) for `ms` milliseconds. */
export interface ToneSegment {
  freqs: readonly number[];
  ms: number;
  /** Peak amplitude of EACH frequency component (linear, 0..32767). Default 8000 (~ -12 dBFS). */
  amplitude?: number;
}

export interface ToneSpec {
  segments: readonly ToneSegment[];
  /** Repeat the cadence: true = forever, a number = that many passes in total. Default 1. */
  repeat?: boolean | number;
}

/** Row/column frequencies of the 16 DTMF keys. */
export const DTMF_FREQS: Readonly<Record<string, readonly [number, number]>> = {
  '1': [697, 1209],
  '2': [697, 1336],
  '3': [697, 1477],
  A: [697, 1633],
  '4': [770, 1209],
  '5': [770, 1336],
  '6': [770, 1477],
  B: [770, 1633],
  '7': [852, 1209],
  '8': [852, 1336],
  '9': [852, 1477],
  C: [852, 1633],
  '*': [941, 1209],
  '0': [941, 1336],
  '#': [941, 1477],
  D: [941, 1633],
};

/** Plays a ToneSpec frame by frame. Sample-exact: segment boundaries need not align to frames. */
export class ToneSource implements FrameSource {
  private seg = 0;
  private segLeft: number; // samples left in the current segment
  private pass = 1;
  /** Per frequency: cos φ, sin φ, cos ω, sin ω. */
  private readonly osc = new Float64Array(16);
  private finished = false;

  constructor(private readonly spec: ToneSpec) {
    if (spec.segments.length === 0) throw new Error('ToneSource: a cadence needs at least one segment');
    for (const s of spec.segments) {
      if (!(s.ms >= 0) || s.freqs.length > 4) throw new Error('ToneSource: segment needs ms >= 0 and at most 4 frequencies');
    }
    this.segLeft = this.samplesOf(0);
    this.startOscillators();
  }

  private startOscillators(): void {
    const s = this.spec.segments[this.seg];
    s.freqs.forEach((hz, f) => {
      const w = (2 * Math.PI * hz) / RATE;
      this.osc.set([1, 0, Math.cos(w), Math.sin(w)], f * 4);
    });
  }

  /** Total duration in ms of one pass of the cadence. */
  get cadenceMs(): number {
    return this.spec.segments.reduce((t, s) => t + s.ms, 0);
  }

  readFrame(out: Frame): boolean {
    if (this.finished) return false;
    let i = 0;
    while (i < N) {
      while (this.segLeft === 0) {
        if (!this.advance()) {
          if (i === 0) return false;
          out.fill(0, i);
          return true;
        }
      }
      const s = this.spec.segments[this.seg];
      const n = Math.min(this.segLeft, N - i);
      const amp = s.amplitude ?? 8000;
      const nf = s.freqs.length;
      const osc = this.osc;
      if (nf === 0) out.fill(0, i, i + n);
      else {
        // Phasor rotation (4 multiplies per sample) instead of Math.sin; renormalised per chunk.
        for (let k = i; k < i + n; k++) {
          let v = 0;
          for (let f = 0; f < nf; f++) {
            const o = f * 4;
            const re = osc[o];
            const im = osc[o + 1];
            v += amp * im;
            osc[o] = re * osc[o + 2] - im * osc[o + 3];
            osc[o + 1] = re * osc[o + 3] + im * osc[o + 2];
          }
          out[k] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
        }
        for (let f = 0; f < nf; f++) {
          const o = f * 4;
          const g = 1 / Math.sqrt(osc[o] * osc[o] + osc[o + 1] * osc[o + 1]);
          osc[o] *= g;
          osc[o + 1] *= g;
        }
      }
      i += n;
      this.segLeft -= n;
    }
    return true;
  }

  close(): void {
    this.finished = true;
  }

  private samplesOf(seg: number): number {
    return Math.round((this.spec.segments[seg].ms * RATE) / 1000);
  }

  private advance(): boolean {
    this.seg++;
    if (this.seg >= this.spec.segments.length) {
      const r = this.spec.repeat ?? 1;
      if (r !== true && (r === false || this.pass >= r)) {
        this.finished = true;
        return false;
      }
      this.pass++;
      this.seg = 0;
    }
    this.segLeft = this.samplesOf(this.seg);
    this.startOscillators();
    return true;
  }
}

/** A single beep (voicemail-style), default 1000 Hz for 250 ms. */
export function beep(opts: { freq?: number; ms?: number; amplitude?: number } = {}): ToneSource {
  return new ToneSource({ segments: [{ freqs: [opts.freq ?? 1000], ms: opts.ms ?? 250, amplitude: opts.amplitude }] });
}

/** Ringback cadences by country; 'us' = 440+480 Hz, 2 s on, 4 s off. */
export const RINGBACK: Readonly<Record<string, ToneSpec>> = {
  us: {
    segments: [
      { freqs: [440, 480], ms: 2000 },
      { freqs: [], ms: 4000 },
    ],
    repeat: true,
  },
  uk: {
    segments: [
      { freqs: [400, 450], ms: 400 },
      { freqs: [], ms: 200 },
      { freqs: [400, 450], ms: 400 },
      { freqs: [], ms: 2000 },
    ],
    repeat: true,
  },
  eu: {
    segments: [
      { freqs: [425], ms: 1000 },
      { freqs: [], ms: 4000 },
    ],
    repeat: true,
  },
};

/** Ringback: a country preset ('us' default) or a custom spec; repeats forever unless `repeat` says otherwise. */
export function ringback(country: keyof typeof RINGBACK | ToneSpec = 'us'): ToneSource {
  if (typeof country !== 'string') return new ToneSource(country);
  const spec = RINGBACK[country];
  if (!spec) throw new Error(`ringback: unknown cadence "${country}"`);
  return new ToneSource(spec);
}

/**
 * In-band DTMF for a digit string ('0'-'9', '*', '#', 'A'-'D'; ',' = extra 500 ms pause).
 * Each digit is `onMs` of its two tones followed by `offMs` of silence.
 */
export function dtmfTones(digits: string, opts: { onMs?: number; offMs?: number; amplitude?: number } = {}): ToneSource {
  const segments: ToneSegment[] = [];
  for (const ch of digits.toUpperCase()) {
    if (ch === ',') {
      segments.push({ freqs: [], ms: 500 });
      continue;
    }
    const f = DTMF_FREQS[ch];
    if (!f) throw new Error(`dtmfTones: "${ch}" is not a DTMF digit`);
    segments.push({ freqs: f, ms: opts.onMs ?? 100, amplitude: opts.amplitude ?? 7000 });
    segments.push({ freqs: [], ms: opts.offMs ?? 100 });
  }
  if (segments.length === 0) throw new Error('dtmfTones: no digits');
  return new ToneSource({ segments });
}

/** `ms` of silence (or endless silence when ms is Infinity). */
export function silence(ms: number): ToneSource {
  return ms === Infinity ? new ToneSource({ segments: [{ freqs: [], ms: 1000 }], repeat: true }) : new ToneSource({ segments: [{ freqs: [], ms }] });
}

/** Drain a finite source into one Int16Array (tests, file writing; allocates). */
export function renderSource(src: FrameSource, maxMs = 600_000): Int16Array {
  const frames: Int16Array[] = [];
  const maxFrames = Math.ceil(maxMs / 20);
  for (let i = 0; i < maxFrames; i++) {
    const f = new Int16Array(N);
    if (!src.readFrame(f)) break;
    frames.push(f);
  }
  const all = new Int16Array(frames.length * N);
  frames.forEach((f, i) => all.set(f, i * N));
  return all;
}
