/**
 * The worker side of an audio fork: raw frames of one leg (in, out or both mixed) or of a conference
 * mix go to a consumer in the API thread, and frames the consumer injects come back to be played.
 * Backpressure: at most `maxInFlight` frames may be unacknowledged; beyond that frames are dropped
 * (and counted) so a slow consumer never delays the 20 ms clock.
 *
 * Its `rate` is fixed when it starts: 8000 (160-sample frames, the default, what media streams and
 * Twilio streams send), or 16000 (320 samples) for a fork asked at the leg's rate on a wideband leg
 * (transcription, ai_talk). Should that leg turn narrowband later, its 8 kHz frames are resampled up
 * (one resampler per fork, made then), so the consumer keeps the rate it was told.
 */
import { Resampler } from './codecs';

export type ForkMix = 'in' | 'out' | 'both';

export interface ForkStats {
  sent: number;
  dropped: number;
  injected: number;
}

export class ForkTap {
  private inFlight = 0;
  private injectQueue: Int16Array[] = [];
  readonly stats: ForkStats = { sent: 0, dropped: 0, injected: 0 };

  constructor(
    readonly id: string,
    readonly mix: ForkMix,
    private readonly post: (frame: Int16Array) => void,
    private readonly maxInFlight = 50,
    readonly rate = 8000,
    private readonly maxInjectFrames = 50 * 60,
  ) {}

  private up: Resampler | null = null;
  private upFrame: Int16Array | null = null;

  offer(frame: Int16Array): void {
    if (this.inFlight >= this.maxInFlight) {
      this.stats.dropped++;
      return;
    }
    this.inFlight++;
    this.stats.sent++;
    this.post(frame.slice());
  }

  /** An 8 kHz frame for a fork of a higher rate (its leg turned narrowband): resampled up, then offered. */
  offerNarrow(frame: Int16Array): void {
    if (this.inFlight >= this.maxInFlight) {
      this.stats.dropped++;
      return;
    }
    this.up ??= new Resampler(8000, this.rate);
    const out = (this.upFrame ??= new Int16Array(this.rate / 50));
    this.up.process(frame, out, frame.length);
    this.offer(out);
  }

  close(): void {
    this.up?.close();
    this.up = null;
  }

  ack(n: number): void {
    this.inFlight = Math.max(0, this.inFlight - n);
  }

  /** Queues injected audio (any length) as 160-sample frames; the oldest audio is dropped past a minute. */
  inject(samples: Int16Array): void {
    for (let off = 0; off < samples.length; off += 160) {
      const f = new Int16Array(160);
      f.set(samples.subarray(off, Math.min(samples.length, off + 160)));
      this.injectQueue.push(f);
    }
    while (this.injectQueue.length > this.maxInjectFrames) this.injectQueue.shift();
  }

  get hasInjected(): boolean {
    return this.injectQueue.length > 0;
  }

  /** Next injected frame for this tick, if any. */
  nextInjected(): Int16Array | null {
    const f = this.injectQueue.shift() ?? null;
    if (f) this.stats.injected++;
    return f;
  }

  clearInjected(): void {
    this.injectQueue = [];
  }
}
