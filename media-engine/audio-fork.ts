/**
 * The API-thread side of an audio fork: delivers each 20 ms frame to a callback or a writable
 * stream, acknowledging it only once the consumer has taken it (promise resolved, or stream
 * drained), and sends injected audio back to the worker. Frames, acknowledgements and injections
 * cross the thread boundary in batches with those of the worker's other forks (worker/frame-batch.ts);
 * a frame is a view of its batch's array, the consumer's to keep.
 */
import type { Writable } from 'node:stream';
import type { ForkMix, ForkStats, InjectRate } from './fork';
import type { WorkerHost } from './worker/worker-host';

export interface ForkOptions {
  /** which audio of an endpoint: what the caller says ('in'), what it hears ('out'), or both mixed */
  mix?: ForkMix;
  /**
   * A leg's frames at its own rate: 16 kHz (320 samples) on a G.722 or Opus leg, else 8 kHz. Default
   * false: 8 kHz frames whatever the leg (what media streams and Twilio streams send). The rate the
   * fork got is `rate` once started; it does not change for the life of the fork.
   */
  legRate?: boolean;
  /** called with each frame (Int16Array of rate / 50 samples: 160 at 8 kHz); a returned promise holds the ack */
  onFrame?: (frame: Int16Array) => void | Promise<void>;
  /** or: frames are written as little-endian PCM chunks (320 bytes at 8 kHz) */
  stream?: Writable;
  /** frames that may be unacknowledged before the worker drops (default 50 = 1 s) */
  maxInFlight?: number;
  /**
   * With `mix: 'in'` and `legRate`: each frame of the caller as its packet is read, not when the jitter
   * buffer plays it (two frames, 40 ms, later), in order, each once (worker/leg-early.ts). For a
   * recogniser or VAD that should hear the caller stop as soon as possible. Default false.
   */
  early?: boolean;
  /**
   * The worker reports when an injection that starts goes out (`nextStart`); without it the worker sends
   * no such report and `nextStart` throws. Default false.
   */
  reportStarts?: boolean;
}

let forkSeq = 0;

export class AudioFork {
  readonly id = `fork-${process.pid}-${++forkSeq}`;
  private stopped = false;
  /** the frames' sample rate, known once started (8000 or 16000) */
  rate = 8000;

  constructor(
    private readonly host: WorkerHost,
    private readonly owner: string,
    private readonly opts: ForkOptions,
  ) {
    if (!opts.onFrame && !opts.stream) throw new TypeError('forkAudioStart needs onFrame or stream');
  }

  /** the callers of nextStart waiting */
  private startWaiters: ((at: number | null) => void)[] = [];

  async start(): Promise<this> {
    this.host.forkSinks.set(this.id, (frame) => this.deliver(frame));
    if (this.opts.reportStarts === true) this.host.forkStarts.set(this.id, (at) => this.settleStarts(at));
    this.rate = await this.host.call(
      'forkStart',
      this.owner,
      this.id,
      this.opts.mix ?? 'both',
      this.opts.maxInFlight ?? 50,
      this.opts.legRate === true,
      this.opts.early === true,
      this.opts.reportStarts === true,
    );
    return this;
  }

  private ack(): void {
    if (!this.stopped) this.host.forkAck(this.id);
  }

  private deliver(frame: Int16Array): void {
    if (this.stopped) return;
    if (this.opts.onFrame) {
      let r: void | Promise<void>;
      try {
        r = this.opts.onFrame(frame);
      } catch {
        return this.ack();
      }
      if (r && typeof (r as Promise<void>).then === 'function')
        (r as Promise<void>).then(
          () => this.ack(),
          () => this.ack(),
        );
      else this.ack();
      return;
    }
    const s = this.opts.stream!;
    const buf = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
    if (s.write(buf)) this.ack();
    else s.once('drain', () => this.ack());
  }

  /**
   * Plays audio back into the call or conference: 16-bit mono samples, any length, at `rate` (8000,
   * the default, or 16000: a wideband leg then gets it at 16 kHz, never through 8 kHz). Throws a
   * TypeError for any other rate.
   */
  inject(samples: Int16Array, rate: InjectRate = 8000): void {
    if (rate !== 8000 && rate !== 16000) throw new TypeError(`inject: rate must be 8000 or 16000, not ${String(rate)}`);
    if (this.stopped) return;
    // copied at once into the worker's next batch: the caller may reuse `samples`
    this.host.inject(this.id, samples, rate);
  }

  /**
   * When the next injection that starts (queued while none of this fork's was) goes out: the first
   * frame's Date.now(), as the worker took it to send; null if none goes within `timeoutMs` (audio was
   * queued already, it was cleared) or the fork stops. Ask before injecting. Only on a fork started with
   * `reportStarts` (a TypeError otherwise).
   */
  nextStart(timeoutMs: number): Promise<number | null> {
    if (this.opts.reportStarts !== true) throw new TypeError('nextStart: the fork was started without reportStarts');
    if (this.stopped) return Promise.resolve(null);
    return new Promise((resolve) => {
      const done = (at: number | null) => {
        clearTimeout(timer);
        this.startWaiters = this.startWaiters.filter((w) => w !== done);
        resolve(at);
      };
      const timer = setTimeout(() => done(null), timeoutMs);
      this.startWaiters.push(done);
    });
  }

  private settleStarts(at: number | null): void {
    for (const w of [...this.startWaiters]) w(at);
  }

  /** Drops the injected audio the worker has not played yet. */
  async clearInjected(): Promise<void> {
    if (this.stopped) return;
    await this.host.call('forkClear', this.id);
  }

  async stop(): Promise<ForkStats | null> {
    if (this.stopped) return null;
    this.stopped = true;
    this.host.forkSinks.delete(this.id);
    this.host.forkStarts.delete(this.id);
    this.settleStarts(null);
    return this.host.call('forkStop', this.id).catch(() => null);
  }
}
