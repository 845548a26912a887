/**
 * Tone generators as frame sources: beep, ringback cadences, DTMF digits and silence.
 * Oscillators keep their phase across frames so tones have no discontinuities at frame edges.
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type Frame, type FrameSource } from './frame';

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
  '1': [697, 1209], '2': [697, 1336], '3': [697, 1477], A: [697, 1633],
  '4': [770, 1209], '5': [770, 1336], '6': [770, 1477], B: [770, 1633],
  '7': [852, 1209], '8': [852, 1336], '9': [852, 1477], C: [852, 1633],
  '*': [941, 1209], '0': [941, 1336], '#': [941, 1477], D: [941, 1633],
};

/** Plays a ToneSpec frame by frame. Sample-exact: segment boundaries need not align to frames. */
export class ToneSource implements FrameSource {
  private seg = 0;
  private segLeft: number; // samples left in the current segment
  private pass = 1;
  private phases: Float64Array = new Float64Array(4);
  private finished = false;

  constructor(private readonly spec: ToneSpec) {
    if (spec.segments.length === 0) throw new Error('ToneSource: a cadence needs at least one segment');
    for (const s of spec.segments) {
      if (!(s.ms >= 0) || s.freqs.length > 4) throw new Error('ToneSource: segment needs ms >= 0 and at most 4 frequencies');
    }
    this.segLeft = this.samplesOf(0);
  }

  /** Total duration in ms of one pass of the cadence. */
  get cadenceMs(): number {
    return this.spec.segments.reduce((t, s) => t + s.ms, 0);
  }

  readFrame(out: Frame): boolean {
    if (this.finished) return false;
    let i = 0;
    while (i < FRAME_SAMPLES) {
      while (this.segLeft === 0) {
        if (!this.advance()) {
          if (i === 0) return false;
          out.fill(0, i);
          return true;
        }
      }
      const s = this.spec.segments[this.seg];
      const n = Math.min(this.segLeft, FRAME_SAMPLES - i);
      const amp = s.amplitude ?? 8000;
      const nf = s.freqs.length;
      for (let k = i; k < i + n; k++) {
        let v = 0;
        for (let f = 0; f < nf; f++) {
          v += amp * Math.sin(this.phases[f]);
          this.phases[f] += (2 * Math.PI * s.freqs[f]) / SAMPLE_RATE;
        }
        out[k] = v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
      }
      for (let f = 0; f < nf; f++) this.phases[f] %= 2 * Math.PI;
      i += n;
      this.segLeft -= n;
    }
    return true;
  }

  close(): void {
    this.finished = true;
  }

  private samplesOf(seg: number): number {
    return Math.round((this.spec.segments[seg].ms * SAMPLE_RATE) / 1000);
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
    this.phases.fill(0);
    this.segLeft = this.samplesOf(this.seg);
    return true;
  }
}

/** A single beep (voicemail-style), default 1000 Hz for 250 ms. */
export function beep(opts: { freq?: number; ms?: number; amplitude?: number } = {}): ToneSource {
  return new ToneSource({ segments: [{ freqs: [opts.freq ?? 1000], ms: opts.ms ?? 250, amplitude: opts.amplitude }] });
}

/** Ringback cadences by country; 'us' = 440+480 Hz, 2 s on, 4 s off. */
export const RINGBACK: Readonly<Record<string, ToneSpec>> = {
  us: { segments: [{ freqs: [440, 480], ms: 2000 }, { freqs: [], ms: 4000 }], repeat: true },
  uk: { segments: [{ freqs: [400, 450], ms: 400 }, { freqs: [], ms: 200 }, { freqs: [400, 450], ms: 400 }, { freqs: [], ms: 2000 }], repeat: true },
  eu: { segments: [{ freqs: [425], ms: 1000 }, { freqs: [], ms: 4000 }], repeat: true },
};

/** Ringback: a country preset ('us' default) or a custom spec; repeats forever unless `repeat` says otherwise. */
export function ringback(country: keyof typeof RINGBACK | ToneSpec = 'us'): ToneSource {
  const spec = typeof country === 'string' ? RINGBACK[country] : country;
  if (!spec) throw new Error(`ringback: unknown cadence "${String(country)}"`);
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
  return ms === Infinity
    ? new ToneSource({ segments: [{ freqs: [], ms: 1000 }], repeat: true })
    : new ToneSource({ segments: [{ freqs: [], ms }] });
}

/** Drain a finite source into one Int16Array (tests, file writing; allocates). */
export function renderSource(src: FrameSource, maxMs = 600_000): Int16Array {
  const frames: Int16Array[] = [];
  const maxFrames = Math.ceil(maxMs / 20);
  for (let i = 0; i < maxFrames; i++) {
    const f = new Int16Array(FRAME_SAMPLES);
    if (!src.readFrame(f)) break;
    frames.push(f);
  }
  const all = new Int16Array(frames.length * FRAME_SAMPLES);
  frames.forEach((f, i) => all.set(f, i * FRAME_SAMPLES));
  return all;
}
