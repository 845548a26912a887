/**
 * Voicemail beep detection: one sustained, stable, pure tone between 400 and 2000 Hz.
 *
 * Per 20 ms frame: the frequency is estimated from interpolated zero crossings, then a Goertzel
 * probe at that frequency must hold ≥ `minPurity` of the frame's energy (speech and music spread
 * their energy over harmonics). The two half-frames must have similar energy: dual tones such as
 * ringback (440+480 Hz) beat at their difference frequency and fail this. Consecutive tonal frames
 * whose frequency stays within `maxDriftHz` of the first are summed; at `minMs` the beep is reported
 * once, and the detector re-arms after the tone stops.
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type Frame } from './frame';
import { goertzelCoeff, goertzelPower } from './goertzel';

export interface BeepDetectorOptions {
  minFreq?: number; // default 400 Hz
  maxFreq?: number; // default 2000 Hz
  /** Sustained duration needed, ms. Default 160 (8 frames). */
  minMs?: number;
  /** Minimum RMS (linear). Default 200 (≈ -44 dBFS). */
  minLevel?: number;
  /** Fraction of frame energy at the tone frequency. Default 0.8. */
  minPurity?: number;
  /** Allowed drift of the frequency during the tone, Hz. Default 20. */
  maxDriftHz?: number;
  /** Max relative energy difference between the frame halves. Default 0.3. */
  maxHalfImbalance?: number;
}

export interface BeepDetection {
  /** Start of the tone, ms since the detector's first sample. */
  offsetMs: number;
  /** Mean frequency over the confirmed part, Hz. */
  frequency: number;
  /** Tone duration at the moment of detection (≥ minMs). */
  durationMs: number;
}

const N = FRAME_SAMPLES;
const FRAME_MS = (N * 1000) / SAMPLE_RATE;

export class BeepDetector {
  private readonly o: Required<BeepDetectorOptions>;
  private readonly minEnergy: number;
  private samples = 0;
  private runFrames = 0;
  private runStart = 0;
  private runFreq0 = 0;
  private runFreqSum = 0;
  private reported = false;
  private missFrames = 0;
  /** Frequency estimated for the last frame (0 when not tonal); for diagnostics. */
  lastFrequency = 0;

  constructor(opts: BeepDetectorOptions = {}) {
    this.o = {
      minFreq: 400,
      maxFreq: 2000,
      minMs: 160,
      minLevel: 200,
      minPurity: 0.8,
      maxDriftHz: 20,
      maxHalfImbalance: 0.3,
      ...opts,
    };
    this.minEnergy = this.o.minLevel * this.o.minLevel * N;
  }

  /** Feed one frame; returns the beep the first time a tone has lasted `minMs`. */
  process(frame: Frame): BeepDetection | null {
    if (frame.length !== N) throw new RangeError(`BeepDetector: frame must have ${N} samples`);
    const f = this.toneFrequency(frame);
    this.lastFrequency = f;
    const frameStart = this.samples;
    this.samples += N;
    const inRun = this.runFrames > 0 && f > 0 && Math.abs(f - this.runFreq0) <= this.o.maxDriftHz;
    if (f > 0 && !inRun) {
      // A new tone starts (or the frequency jumped): restart the run.
      this.runFrames = 0;
      this.runFreqSum = 0;
      this.runFreq0 = f;
      this.runStart = frameStart;
      // `reported` stays set: a frequency change without a gap is still the same beep.
    }
    if (f > 0) {
      this.missFrames = 0;
      this.runFrames++;
      this.runFreqSum += f;
      const ms = this.runFrames * FRAME_MS;
      if (!this.reported && ms >= this.o.minMs) {
        this.reported = true;
        return {
          offsetMs: Math.round((this.runStart * 1000) / SAMPLE_RATE),
          frequency: Math.round(this.runFreqSum / this.runFrames),
          durationMs: ms,
        };
      }
      return null;
    }
    // Not tonal: one odd frame is tolerated inside a tone, two end it and re-arm.
    if (++this.missFrames >= 2) {
      this.runFrames = 0;
      this.reported = false;
    }
    return null;
  }

  reset(): void {
    this.samples = this.runFrames = this.missFrames = 0;
    this.reported = false;
  }

  /** The frame's tone frequency in Hz, or 0 when the frame is not one pure, steady tone. */
  private toneFrequency(x: Frame): number {
    let e1 = 0;
    let e2 = 0;
    for (let i = 0; i < N / 2; i++) e1 += x[i] * x[i];
    for (let i = N / 2; i < N; i++) e2 += x[i] * x[i];
    const e = e1 + e2;
    if (e < this.minEnergy) return 0;
    if (Math.abs(e1 - e2) > this.o.maxHalfImbalance * e) return 0;
    // Zero crossings, interpolated to a fraction of a sample.
    let first = -1;
    let last = -1;
    let count = 0;
    for (let i = 1; i < N; i++) {
      const a = x[i - 1];
      const b = x[i];
      if ((a < 0 && b >= 0) || (a >= 0 && b < 0)) {
        const t = i - 1 + a / (a - b);
        if (first < 0) first = t;
        last = t;
        count++;
      }
    }
    if (count < 3 || last <= first) return 0;
    const freq = ((count - 1) * SAMPLE_RATE) / (2 * (last - first));
    // 2 % slack at the band edges: a 400 Hz beep may measure 399.9 Hz.
    if (freq < this.o.minFreq * 0.98 || freq > this.o.maxFreq * 1.02) return 0;
    const p = goertzelPower(x, 0, N, goertzelCoeff(freq));
    return (2 * p) / (N * e) >= this.o.minPurity ? freq : 0;
  }
}
