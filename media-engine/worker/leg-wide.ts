/**
 * The wideband frames of one leg (16 kHz for G.722 and Opus): what it received and sends this tick at
 * its own rate, and the three speexdsp resamplers (one per stream, so frames join without a seam)
 * between those and the 8 kHz frames the rest of the worker uses: received audio down to 8 kHz for
 * detectors, the mixer, recorders and narrowband bridge peers; 8 kHz audio (players, TTS, the
 * conference mix, a G.711 peer) up to the leg's rate; and a wideband frame sent straight through
 * down to 8 kHz for recorders and forks. Made once per leg; nothing is allocated per frame.
 */
import { Resampler } from '../codecs';

const FRAME_8K = 160;

export class WideFrames {
  /** this tick's received frame at `rate` */
  readonly in: Int16Array;
  /** this tick's frame to send at `rate` */
  readonly out: Int16Array;
  readonly silence: Int16Array;
  private readonly inDown: Resampler;
  private readonly outUp: Resampler;
  private readonly outDown: Resampler;

  constructor(readonly rate: number) {
    const n = rate / 50;
    this.in = new Int16Array(n);
    this.out = new Int16Array(n);
    this.silence = new Int16Array(n);
    this.inDown = new Resampler(rate, 8000);
    this.outUp = new Resampler(8000, rate);
    this.outDown = new Resampler(rate, 8000);
  }

  /** `in` converted to 8 kHz into `to` (160 samples). */
  down(to: Int16Array): void {
    this.inDown.process(this.in, to, this.in.length);
  }

  /** An 8 kHz frame converted into `out`; returns `out`. */
  up(from: Int16Array): Int16Array {
    this.outUp.process(from, this.out, FRAME_8K);
    return this.out;
  }

  /** `out` converted to 8 kHz into `to`; returns `to`. */
  downOut(to: Int16Array): Int16Array {
    this.outDown.process(this.out, to, this.out.length);
    return to;
  }

  close(): void {
    this.inDown.close();
    this.outUp.close();
    this.outDown.close();
  }
}
