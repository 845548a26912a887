/**
 * The API-thread side of an audio fork: delivers each 20 ms frame to a callback or a writable
 * stream, acknowledging it only once the consumer has taken it (promise resolved, or stream
 * drained), and sends injected audio back to the worker.
 */
import type { Writable } from 'node:stream';
import type { ForkMix, ForkStats } from './fork';
import type { WorkerHost } from './worker/worker-host';

export interface ForkOptions {
  /** which audio of an endpoint: what the caller says ('in'), what it hears ('out'), or both mixed */
  mix?: ForkMix;
  /** called with each frame (Int16Array of 160 samples); a returned promise holds the ack */
  onFrame?: (frame: Int16Array) => void | Promise<void>;
  /** or: frames are written as 320-byte little-endian PCM chunks */
  stream?: Writable;
  /** frames that may be unacknowledged before the worker drops (default 50 = 1 s) */
  maxInFlight?: number;
}

let forkSeq = 0;

export class AudioFork {
  readonly id = `fork-${process.pid}-${++forkSeq}`;
  private stopped = false;

  constructor(
    private readonly host: WorkerHost,
    private readonly owner: string,
    private readonly opts: ForkOptions,
  ) {
    if (!opts.onFrame && !opts.stream) throw new TypeError('forkAudioStart needs onFrame or stream');
  }

  async start(): Promise<this> {
    this.host.forkSinks.set(this.id, (frame) => this.deliver(frame));
    await this.host.call('forkStart', this.owner, this.id, this.opts.mix ?? 'both', this.opts.maxInFlight ?? 50);
    return this;
  }

  private ack(): void {
    if (!this.stopped) this.host.post({ t: 'forkAck', forkId: this.id, n: 1 });
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

  /** Plays audio back into the call or conference (8 kHz 16-bit mono samples, any length). */
  inject(samples: Int16Array): void {
    if (this.stopped) return;
    const copy = samples.slice();
    this.host.post({ t: 'inject', forkId: this.id, samples: copy }, [copy.buffer as ArrayBuffer]);
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
    return this.host.call('forkStop', this.id).catch(() => null);
  }
}
