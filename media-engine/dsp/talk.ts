/**
 * Who is talking in a conference: a per-member level detector with hysteresis (the mixer runs one
 * per member on the audio that member puts into the mix; a muted member puts none in).
 *
 * Level: the frame's RMS in dBFS (full scale = 32768). Quiet → talking once LOUD_FRAMES frames in a
 * row are at or above START_DBFS; talking → quiet once QUIET_FRAMES frames in a row are below
 * STOP_DBFS (a missing frame counts as silence). The gap between the two thresholds and the two runs
 * keep a voice that dips between words from flapping, and a noise floor or a click from starting it.
 *
 *   quiet ──(LOUD_FRAMES ≥ START_DBFS)──▶ talking ──(QUIET_FRAMES < STOP_DBFS)──▶ quiet
 */
import { meanSquare, type Frame } from './frame';

/** A frame at or above this level counts toward a start (speech is about −30 to −15 dBFS; a line's noise −60 to −50). */
export const START_DBFS = -40;
/** A frame below this level counts toward a stop. */
export const STOP_DBFS = -46;
/** 60 ms of level to start. */
export const LOUD_FRAMES = 3;
/** 600 ms of quiet to stop (a pause between words is shorter). */
export const QUIET_FRAMES = 30;

const ms = (dbfs: number): number => (32768 * 10 ** (dbfs / 20)) ** 2;
/** Thresholds as mean squares, so the per-frame work is one multiply-add per sample. */
const START_MS = ms(START_DBFS);
const STOP_MS = ms(STOP_DBFS);

export class TalkDetector {
  talking = false;
  private run = 0;

  /** Feeds this tick's frame (null: nothing from the member); returns 'start' or 'stop' on a change, else null. */
  push(frame: Frame | null): 'start' | 'stop' | null {
    const e = meanSquare(frame);
    if (!this.talking) {
      this.run = e >= START_MS ? this.run + 1 : 0;
      if (this.run < LOUD_FRAMES) return null;
      this.talking = true;
      this.run = 0;
      return 'start';
    }
    this.run = e < STOP_MS ? this.run + 1 : 0;
    if (this.run < QUIET_FRAMES) return null;
    this.talking = false;
    this.run = 0;
    return 'stop';
  }
}
