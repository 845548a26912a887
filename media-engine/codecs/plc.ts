/**
 * Packet loss concealment by pitch-period repetition (the method of ITU-T G.711 Appendix I, written
 * here for the engine, simplified): the last pitch period found in the history is repeated, at full
 * level for the first 10 ms of a loss, then fading
 * by 20 % per 10 ms to silence after 60 ms; the first frame after the loss is cross-faded from the
 * synthetic continuation to the real signal. Used for G.711 (pure TypeScript, so G.711 needs no
 * native module); G.722 uses spandsp's PLC of the same kind in the native module.
 *
 * No allocation after construction. Works at any rate; pitch is searched over 66-400 Hz.
 */

export class PitchPlc {
  private readonly hist: Float32Array;
  private readonly histLen: number;
  private readonly minLag: number;
  private readonly maxLag: number;
  private readonly fadeStart: number;
  private readonly fadeStep: number;
  private readonly joinLen: number;
  private filled = 0;
  private pitch = 0;
  /** samples concealed in the current loss (0: not in a loss) */
  private lost = 0;

  constructor(readonly sampleRate: number) {
    this.minLag = Math.floor(sampleRate / 400);
    this.maxLag = Math.ceil(sampleRate / 66);
    this.histLen = this.maxLag * 3;
    this.hist = new Float32Array(this.histLen);
    this.fadeStart = sampleRate / 100; // 10 ms
    this.fadeStep = 0.2 / (sampleRate / 100); // 20 % per 10 ms
    this.joinLen = Math.round(sampleRate / 200); // 5 ms cross-fade into the real signal
  }

  /** A received (decoded) stretch: kept as history; the first after a loss is faded in from the concealment. */
  rx(pcm: Int16Array, n: number): void {
    if (this.lost > 0 && this.pitch > 0) {
      const m = Math.min(this.joinLen, n);
      for (let i = 0; i < m; i++) {
        const w = (i + 1) / (m + 1);
        const synth = this.synthAt(this.lost + i);
        pcm[i] = clip16(synth * (1 - w) + pcm[i] * w);
      }
    }
    this.lost = 0;
    const h = this.hist;
    const L = this.histLen;
    if (n >= L) {
      for (let i = 0; i < L; i++) h[i] = pcm[n - L + i];
    } else {
      h.copyWithin(0, n);
      for (let i = 0; i < n; i++) h[L - n + i] = pcm[i];
    }
    this.filled = Math.min(L, this.filled + n);
  }

  /** n samples for a lost stretch into out: the repeated pitch period, fading; silence with no history. */
  fillin(out: Int16Array, n: number): number {
    if (this.filled < this.histLen) {
      out.fill(0, 0, n);
      return n;
    }
    if (this.lost === 0) {
      this.pitch = this.findPitch();
    }
    for (let i = 0; i < n; i++) out[i] = clip16(this.synthAt(this.lost + i));
    this.lost += n;
    return n;
  }

  /** Sample k of the concealment (k counted from the start of the loss), with the fade applied. */
  private synthAt(k: number): number {
    const P = this.pitch;
    const L = this.histLen;
    const h = this.hist;
    const v = h[L - P + (k % P)];
    const gain = k < this.fadeStart ? 1 : Math.max(0, 1 - (k - this.fadeStart) * this.fadeStep);
    return v * gain;
  }

  /**
   * The lag in [minLag, maxLag] with the highest normalised correlation of the last pitch-length window
   * against the past: a coarse pass over every other lag on every other sample, then every lag within
   * two of the best at full resolution (a quarter of the work of a full search).
   */
  private findPitch(): number {
    let best = this.minLag;
    let bestScore = -Infinity;
    for (let lag = this.minLag; lag <= this.maxLag; lag += 2) {
      const score = this.correlation(lag, 2);
      if (score > bestScore) {
        bestScore = score;
        best = lag;
      }
    }
    const coarse = best;
    bestScore = -Infinity;
    for (let lag = Math.max(this.minLag, coarse - 2); lag <= Math.min(this.maxLag, coarse + 2); lag++) {
      const score = this.correlation(lag, 1);
      if (score > bestScore) {
        bestScore = score;
        best = lag;
      }
    }
    return best;
  }

  private correlation(lag: number, step: number): number {
    const h = this.hist;
    const L = this.histLen;
    const W = Math.min(this.maxLag, L - this.maxLag);
    let xy = 0;
    let yy = 0;
    for (let i = L - W; i < L; i += step) {
      const y = h[i - lag];
      xy += h[i] * y;
      yy += y * y;
    }
    return yy > 0 ? xy / Math.sqrt(yy) : 0;
  }
}

function clip16(v: number): number {
  return v > 32767 ? 32767 : v < -32768 ? -32768 : Math.round(v);
}
