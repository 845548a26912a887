/**
 * Echo cancellation of one leg's received audio (opt-in, Endpoint.echoCancel; docs/ai.md "Turn-taking"):
 * each tick, before anything hears the caller (VAD tap, DTMF and AMD detectors, recorders, forks, a
 * bridge peer or conference), the frame received is cleaned of the echo of what the leg sent, by
 * libspeexdsp's canceller (dsp/echo-canceller.ts) at the leg's own rate. The far end is the frame the
 * leg sent in the previous tick (its echo can only come back later), so the two streams are in step
 * by construction: the filter sees the path phone + network + jitter buffer as one fixed delay.
 * A tick with nothing received still runs the filter (silence in, output dropped) so the far end's
 * history stays continuous. A rate change (re-INVITE to another codec) starts a new canceller.
 * While an early fork listens (leg-early.ts), the frames are cleaned as they are handed on instead,
 * against a queue of the frames sent.
 */
import { EchoCanceller } from '../dsp/echo-canceller';

export interface EchoCancelOptions {
  /** the longest echo modelled, ms (default 500, 20-1000) */
  tailMs?: number;
  /** residual echo suppression, dB (default 0, 0-60) */
  residualDb?: number;
}

export class LegEchoCanceller {
  private aec: EchoCanceller;
  private silence: Int16Array;
  private scratch: Int16Array;
  /** frames processed (with something received) */
  frames = 0;

  constructor(
    private readonly opts: EchoCancelOptions,
    rate: number,
  ) {
    this.aec = new EchoCanceller({ rate, ...opts });
    this.silence = new Int16Array(rate / 50);
    this.scratch = new Int16Array(rate / 50);
  }

  /** `near` (this tick's frame received, or null: none) with the echo of `far` (the last frame sent, same rate) taken out, in place. */
  cancel(near: Int16Array | null, far: Int16Array, rate: number): void {
    if (rate !== this.aec.rate) {
      this.aec.close();
      this.aec = new EchoCanceller({ rate, ...this.opts });
      this.silence = new Int16Array(rate / 50);
      this.scratch = new Int16Array(rate / 50);
    }
    if (near) {
      this.aec.process(near, far, near);
      this.frames++;
    } else this.aec.process(this.silence, far, this.scratch);
  }

  close(): void {
    this.aec.close();
  }
}
