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
 *
 * Injected audio comes at 8 kHz (the default) or 16 kHz (`inject(samples, 16000)`: a media stream's or
 * ai_talk's voice made at 16 kHz) and is queued in 20 ms frames of its rate. A wideband leg takes it at
 * 16 kHz and a narrowband leg or a conference's 8 kHz mix at 8 kHz (`nextInjectedAt`); a frame of the
 * other rate is converted by the fork's own resampler for that direction (made the first time), so the
 * injected stream joins without a seam and 16 kHz audio reaches a wideband leg never through 8 kHz.
 */
import { Resampler } from './codecs';

export type ForkMix = 'in' | 'out' | 'both';

/** The rates injected audio may come at. */
export type InjectRate = 8000 | 16000;

export interface ForkStats {
  sent: number;
  dropped: number;
  injected: number;
}

export class ForkTap {
  private inFlight = 0;
  private injectQueue: Int16Array[] = [];
  /** injected audio was queued when none was: its first frame, once taken, is reported to `started` */
  private starting = false;
  /** told when the first frame of an injection that starts is taken to be sent (Date.now()) */
  started: ((at: number) => void) | null = null;
  readonly stats: ForkStats = { sent: 0, dropped: 0, injected: 0 };

  constructor(
    readonly id: string,
    readonly mix: ForkMix,
    private readonly post: (frame: Int16Array) => void,
    private readonly maxInFlight = 50,
    readonly rate = 8000,
    private readonly maxInjectFrames = 50 * 60,
    /** an `in` fork at the leg's rate handed each frame as it is received, not when played (worker/leg-early.ts) */
    readonly early = false,
  ) {}

  private up: Resampler | null = null;
  private upFrame: Int16Array | null = null;
  private injUp: Resampler | null = null;
  private injUpFrame: Int16Array | null = null;
  private injDown: Resampler | null = null;
  private injDownFrame: Int16Array | null = null;

  offer(frame: Int16Array): void {
    if (this.inFlight >= this.maxInFlight) {
      this.stats.dropped++;
      return;
    }
    this.inFlight++;
    this.stats.sent++;
    // `post` copies the frame before the tick goes on (the worker's batch for the API thread)
    this.post(frame);
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
    this.injUp?.close();
    this.injUp = null;
    this.injDown?.close();
    this.injDown = null;
  }

  ack(n: number): void {
    this.inFlight = Math.max(0, this.inFlight - n);
  }

  /**
   * Queues injected audio (any length, at `rate`: 8000 or 16000) as 20 ms frames of that rate; the
   * oldest audio is dropped past a minute.
   */
  inject(samples: Int16Array, rate: InjectRate = 8000): void {
    if (this.injectQueue.length === 0 && samples.length > 0) this.starting = true;
    const n = rate / 50;
    for (let off = 0; off < samples.length; off += n) {
      const f = new Int16Array(n);
      f.set(samples.subarray(off, Math.min(samples.length, off + n)));
      this.injectQueue.push(f);
    }
    while (this.injectQueue.length > this.maxInjectFrames) this.injectQueue.shift();
  }

  get hasInjected(): boolean {
    return this.injectQueue.length > 0;
  }

  /** The rate of the next injected frame (0: none queued). */
  get nextInjectedRate(): 0 | InjectRate {
    const f = this.injectQueue[0];
    return f ? (f.length === 320 ? 16000 : 8000) : 0;
  }

  /** A 16 kHz injected frame (taken with `nextInjectedAt(16000)`) brought down to 8 kHz by the fork's resampler. */
  narrowOf(wide: Int16Array): Int16Array {
    const out = (this.injDownFrame ??= new Int16Array(160));
    (this.injDown ??= new Resampler(16000, 8000)).process(wide, out, wide.length);
    return out;
  }

  /** Next injected frame for this tick at 8 kHz, if any (a conference's 8 kHz mix). */
  nextInjected(): Int16Array | null {
    return this.nextInjectedAt(8000);
  }

  /** Next injected frame for this tick at `rate` (a 16 kHz one for a wideband leg), converted when it came at the other rate. */
  nextInjectedAt(rate: InjectRate): Int16Array | null {
    const f = this.injectQueue.shift() ?? null;
    if (!f) return null;
    this.stats.injected++;
    if (this.starting) {
      this.starting = false;
      this.started?.(Date.now());
    }
    if (f.length === rate / 50) return f;
    return rate === 16000 ? this.wideOf(f) : this.narrowOf(f);
  }

  /** An 8 kHz injected frame brought up to 16 kHz by the fork's resampler. */
  wideOf(narrow: Int16Array): Int16Array {
    const out = (this.injUpFrame ??= new Int16Array(320));
    (this.injUp ??= new Resampler(8000, 16000)).process(narrow, out, narrow.length);
    return out;
  }

  clearInjected(): void {
    this.injectQueue = [];
    this.starting = false;
  }
}
