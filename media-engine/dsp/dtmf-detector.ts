/**
 * In-band DTMF detection (Goertzel) on 20 ms / 8 kHz frames, with talk-off protection.
 *
 * Analysis: 160-sample windows every 80 samples (10 ms hop, 50 Hz bins), so each frame gives two
 * verdicts. A window "hits" a digit when all of these hold:
 *  - signal level above `minLevel` (RMS of the window);
 *  - the strongest row and column tones together carry ≥ `minToneShare` of the window energy
 *    (speech spreads its energy, DTMF concentrates it);
 *  - each peak beats every other tone of its group by `groupMarginDb`;
 *  - twist (column vs row power) within `maxNormalTwistDb` / `maxReverseTwistDb`;
 *  - the second harmonics of both tones are weak (< `maxHarmonicRatio` of the fundamental): voiced
 *    speech is rich in harmonics, generated tones have none.
 * A digit is reported once, after `minOnHits` consecutive hits on the same digit (≈40 ms of tone),
 * and is not reported again until `minGapHits` windows without that digit (inter-digit gap).
 */
import { FRAME_SAMPLES, SAMPLE_RATE, type Frame } from './frame';
import { goertzelCoeff, goertzelPower } from './goertzel';

export interface DtmfDetectorOptions {
  /** Minimum RMS of a window to consider (linear 16-bit). Default 150 (≈ -47 dBFS). */
  minLevel?: number;
  /** Share of window energy the two tones must carry. Default 0.6. */
  minToneShare?: number;
  /** dB each tone must exceed the other tones of its group. Default 8. */
  groupMarginDb?: number;
  /** Column may be at most this many dB weaker than the row. Default 8. */
  maxNormalTwistDb?: number;
  /** Column may be at most this many dB stronger than the row. Default 6. */
  maxReverseTwistDb?: number;
  /** Second-harmonic power must stay below this fraction of its fundamental. Default 0.1 (-10 dB). */
  maxHarmonicRatio?: number;
  /** Consecutive hit windows (10 ms hop) needed to report. Default 3 (~40 ms tone). */
  minOnHits?: number;
  /** Consecutive non-hit windows that end a digit (inter-digit gap). Default 3 (~30 ms). */
  minGapHits?: number;
}

export interface DtmfDetection {
  digit: string;
  /** Approximate start of the tone, in ms since the detector's first sample. */
  offsetMs: number;
}

const ROWS = [697, 770, 852, 941];
const COLS = [1209, 1336, 1477, 1633];
const KEYS = ['123A', '456B', '789C', '*0#D'];
const N = FRAME_SAMPLES;
const HOP = N / 2;

const dbToRatio = (db: number) => Math.pow(10, db / 10);

export class DtmfDetector {
  private readonly buf = new Float64Array(2 * N); // previous frame + current frame
  private readonly fundCoeff = new Float64Array(8);
  private readonly harmCoeff = new Float64Array(8);
  private readonly pow = new Float64Array(8);
  /** Rectangular-window power response of row r's 2nd-harmonic bin to column c's tone, [r*4+c]. */
  private readonly leak = new Float64Array(16);
  private readonly minEnergy: number;
  private readonly minShare: number;
  private readonly margin: number;
  private readonly normalTwist: number;
  private readonly reverseTwist: number;
  private readonly harmRatio: number;
  private readonly minOn: number;
  private readonly minGap: number;
  private samples = 0; // samples seen before the current frame
  private candidate = ''; // digit seen in consecutive windows
  private candidateHits = 0;
  private candidateStart = 0;
  private reported = ''; // digit already reported and still sounding
  private misses = 0;

  constructor(opts: DtmfDetectorOptions = {}) {
    const freqs = [...ROWS, ...COLS];
    freqs.forEach((f, i) => {
      this.fundCoeff[i] = goertzelCoeff(f);
      this.harmCoeff[i] = goertzelCoeff(2 * f);
    });
    // Row harmonics sit 58–71 Hz from a column tone (2×697=1394 vs 1336, 2×770=1540 vs 1477,
    // 2×852=1704 vs 1633): about a bin and a half, so the column leaks into the harmonic probe.
    for (let r = 0; r < 4; r++) {
      for (let c = 0; c < 4; c++) {
        const d = Math.abs(2 * ROWS[r] - COLS[c]) / SAMPLE_RATE;
        const k = d === 0 ? 1 : Math.sin(Math.PI * d * N) / (N * Math.sin(Math.PI * d));
        this.leak[r * 4 + c] = k * k;
      }
    }
    const lvl = opts.minLevel ?? 150;
    this.minEnergy = lvl * lvl * N;
    this.minShare = opts.minToneShare ?? 0.6;
    this.margin = dbToRatio(opts.groupMarginDb ?? 8);
    this.normalTwist = dbToRatio(opts.maxNormalTwistDb ?? 8);
    this.reverseTwist = dbToRatio(opts.maxReverseTwistDb ?? 6);
    this.harmRatio = opts.maxHarmonicRatio ?? 0.1;
    this.minOn = opts.minOnHits ?? 3;
    this.minGap = opts.minGapHits ?? 3;
  }

  /** Feed one 160-sample frame; returns a digit when a new tone has just been confirmed. */
  process(frame: Frame): DtmfDetection | null {
    if (frame.length !== N) throw new RangeError(`DtmfDetector: frame must have ${N} samples`);
    const b = this.buf;
    b.copyWithin(0, N);
    for (let i = 0; i < N; i++) b[N + i] = frame[i];
    let out: DtmfDetection | null = null;
    // Window 1 straddles the previous frame's second half and this frame's first half.
    const first = this.samples > 0 ? this.step(HOP, this.samples - HOP) : null;
    const second = this.step(N, this.samples);
    out = first ?? second;
    this.samples += N;
    return out;
  }

  /** Forget state (e.g. after a re-INVITE or a source change). */
  reset(): void {
    this.buf.fill(0);
    this.samples = 0;
    this.candidate = this.reported = '';
    this.candidateHits = this.misses = 0;
  }

  private step(start: number, windowStartSample: number): DtmfDetection | null {
    const digit = this.analyse(start);
    if (digit === '') {
      this.candidate = '';
      this.candidateHits = 0;
      if (this.reported !== '' && ++this.misses >= this.minGap) this.reported = '';
      return null;
    }
    if (digit === this.reported) {
      this.misses = 0;
      return null;
    }
    if (digit !== this.candidate) {
      this.candidate = digit;
      this.candidateHits = 0;
      this.candidateStart = windowStartSample;
    }
    if (++this.candidateHits < this.minOn) return null;
    this.reported = digit;
    this.misses = 0;
    this.candidate = '';
    this.candidateHits = 0;
    return { digit, offsetMs: Math.round((this.candidateStart * 1000) / SAMPLE_RATE) };
  }

  /** The eight fundamental Goertzel filters in one pass over the window (into this.pow). */
  private goertzel8(start: number): void {
    const b = this.buf;
    const c = this.fundCoeff;
    const c0 = c[0],
      c1 = c[1],
      c2 = c[2],
      c3 = c[3],
      c4 = c[4],
      c5 = c[5],
      c6 = c[6],
      c7 = c[7];
    let a0 = 0,
      a1 = 0,
      a2 = 0,
      a3 = 0,
      a4 = 0,
      a5 = 0,
      a6 = 0,
      a7 = 0; // s[n-1]
    let z0 = 0,
      z1 = 0,
      z2 = 0,
      z3 = 0,
      z4 = 0,
      z5 = 0,
      z6 = 0,
      z7 = 0; // s[n-2]
    let t = 0;
    for (let i = start, end = start + N; i < end; i++) {
      const x = b[i];
      t = x + c0 * a0 - z0;
      z0 = a0;
      a0 = t;
      t = x + c1 * a1 - z1;
      z1 = a1;
      a1 = t;
      t = x + c2 * a2 - z2;
      z2 = a2;
      a2 = t;
      t = x + c3 * a3 - z3;
      z3 = a3;
      a3 = t;
      t = x + c4 * a4 - z4;
      z4 = a4;
      a4 = t;
      t = x + c5 * a5 - z5;
      z5 = a5;
      a5 = t;
      t = x + c6 * a6 - z6;
      z6 = a6;
      a6 = t;
      t = x + c7 * a7 - z7;
      z7 = a7;
      a7 = t;
    }
    const p = this.pow;
    p[0] = a0 * a0 + z0 * z0 - c0 * a0 * z0;
    p[1] = a1 * a1 + z1 * z1 - c1 * a1 * z1;
    p[2] = a2 * a2 + z2 * z2 - c2 * a2 * z2;
    p[3] = a3 * a3 + z3 * z3 - c3 * a3 * z3;
    p[4] = a4 * a4 + z4 * z4 - c4 * a4 * z4;
    p[5] = a5 * a5 + z5 * z5 - c5 * a5 * z5;
    p[6] = a6 * a6 + z6 * z6 - c6 * a6 * z6;
    p[7] = a7 * a7 + z7 * z7 - c7 * a7 * z7;
  }

  /** The digit this window shows, or '' — all the talk-off checks live here. */
  private analyse(start: number): string {
    const b = this.buf;
    let e = 0;
    for (let i = start; i < start + N; i++) e += b[i] * b[i];
    if (e < this.minEnergy) return '';
    const p = this.pow;
    this.goertzel8(start);
    let r = 0;
    for (let i = 1; i < 4; i++) if (p[i] > p[r]) r = i;
    let c = 4;
    for (let i = 5; i < 8; i++) if (p[i] > p[c]) c = i;
    const pr = p[r];
    const pc = p[c];
    // Share of total energy: 2|X|²/(N·E) is the fraction a sinusoid at that bin carries.
    if ((2 * (pr + pc)) / (N * e) < this.minShare) return '';
    if (pc * this.normalTwist < pr || pr * this.reverseTwist < pc) return '';
    for (let i = 0; i < 4; i++) if (i !== r && p[i] * this.margin > pr) return '';
    for (let i = 4; i < 8; i++) if (i !== c && p[i] * this.margin > pc) return '';
    // Allowed harmonic: the ratio, plus the column's worst-case (in-phase) leakage into the probe.
    const allowed = Math.sqrt(pr * this.harmRatio) + Math.sqrt(pc * this.leak[r * 4 + (c - 4)]);
    if (goertzelPower(b, start, N, this.harmCoeff[r]) > allowed * allowed) return '';
    if (goertzelPower(b, start, N, this.harmCoeff[c]) > pc * this.harmRatio) return '';
    return KEYS[r][c - 4];
  }
}
