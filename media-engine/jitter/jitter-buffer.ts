/**
 * A small adaptive jitter buffer working on RTP timestamps, so any packetisation (10, 20, 30 ms)
 * comes out as 160-sample frames. The playout point trails the newest packet by `target` frames;
 * the target grows when packets arrive too late and shrinks after a long calm spell.
 * Missing samples are concealed by repeating the last frame, fading, then silence.
 */
import { tsDiff } from '../rtp/packet';

const FRAME = 160;

interface Entry {
  ts: number;
  samples: Int16Array;
}

export interface JitterStats {
  late: number;
  concealed: number;
  dropped: number;
  targetFrames: number;
}

export class JitterBuffer {
  private entries: Entry[] = []; // sorted by ts
  private playTs = 0;
  private started = false;
  private target: number;
  private calmTicks = 0;
  private concealRun = 0;
  private playedAny = false;
  private readonly last = new Int16Array(FRAME);
  readonly stats: JitterStats = { late: 0, concealed: 0, dropped: 0, targetFrames: 0 };

  constructor(
    private readonly minFrames = 1,
    private readonly maxFrames = 8,
    initialFrames = 2,
  ) {
    this.target = Math.max(minFrames, Math.min(maxFrames, initialFrames));
    this.stats.targetFrames = this.target;
  }

  /** Forget everything (new SSRC, or a timestamp jump). */
  reset(): void {
    this.entries = [];
    this.started = false;
    this.concealRun = 0;
    this.playedAny = false;
  }

  get depthFrames(): number {
    if (!this.started || this.entries.length === 0) return 0;
    const lastE = this.entries[this.entries.length - 1];
    return Math.max(0, tsDiff(lastE.ts + lastE.samples.length, this.playTs) / FRAME);
  }

  push(ts: number, samples: Int16Array): void {
    if (!this.started) {
      this.started = true;
      this.playTs = (ts - this.target * FRAME) >>> 0;
    } else {
      const d = tsDiff(ts, this.playTs);
      if (d + samples.length <= 0) {
        // too late to play: widen the buffer so the next ones fit
        this.stats.late++;
        if (d > -FRAME * 50) this.grow();
        else this.reset(), this.push(ts, samples); // a jump backwards: the sender restarted
        return;
      }
      if (d > FRAME * 50 * 5) {
        // a jump forward by more than 5 s: resynchronise rather than play seconds of concealment
        this.reset();
        this.push(ts, samples);
        return;
      }
    }
    // insert sorted; ignore duplicates
    let i = this.entries.length;
    while (i > 0 && tsDiff(this.entries[i - 1].ts, ts) > 0) i--;
    if (i > 0 && this.entries[i - 1].ts === ts) return;
    this.entries.splice(i, 0, { ts, samples });
    if (this.entries.length > this.maxFrames * 4 + 8) {
      this.entries.shift();
      this.stats.dropped++;
    }
  }

  private grow(): void {
    if (this.target < this.maxFrames) {
      this.target++;
      this.stats.targetFrames = this.target;
      this.playTs = (this.playTs - FRAME) >>> 0;
    }
    this.calmTicks = 0;
  }

  /**
   * Fills `out` with the next 160 samples; returns false when nothing has ever been received (or after
   * a long silence), in which case `out` holds silence.
   */
  pop(out: Int16Array): boolean {
    if (!this.started) {
      out.fill(0);
      return false;
    }
    let filled = 0;
    let i = 0;
    out.fill(0);
    const start = this.playTs;
    // drop entries fully before the playout point
    while (this.entries.length && tsDiff(this.entries[0].ts + this.entries[0].samples.length, start) <= 0) this.entries.shift();
    for (i = 0; i < this.entries.length; i++) {
      const e = this.entries[i];
      const off = tsDiff(e.ts, start);
      if (off >= FRAME) break;
      const from = Math.max(0, -off);
      const to = Math.min(e.samples.length, FRAME - off);
      for (let k = from; k < to; k++) out[off + k] = e.samples[k];
      filled += to - from;
    }
    this.playTs = (this.playTs + FRAME) >>> 0;
    if (filled === 0) {
      if (!this.playedAny) return true; // still the initial playout delay
      this.stats.concealed++;
      this.concealRun++;
      if (this.entries.length === 0 && this.concealRun > 50) {
        // the far end went quiet (hold, VAD): restart cleanly on its next packet
        this.reset();
        return false;
      }
      this.conceal(out);
    } else {
      this.concealRun = 0;
      this.playedAny = true;
      this.last.set(out);
    }
    // shrink after 10 s without lateness when we run ahead of the target
    if (++this.calmTicks > 500 && this.target > this.minFrames) {
      this.calmTicks = 0;
      if (this.depthFrames > this.target) {
        this.target--;
        this.stats.targetFrames = this.target;
        this.playTs = (this.playTs + FRAME) >>> 0;
      }
    }
    return true;
  }

  private conceal(out: Int16Array): void {
    // repeat the last good frame with a fade for 3 frames, then silence
    if (this.concealRun > 3) return;
    const g = 1 - this.concealRun / 4;
    for (let k = 0; k < FRAME; k++) out[k] = this.last[k] * g;
  }
}
