/**
 * Turns of speech from per-frame VAD decisions: a turn starts after `startMs` of voiced frames
 * (a run broken by 3 or more silent frames starts over) and stops after `stopMs` of silence. This
 * is the hysteresis ai_talk's barge-in and turn taking need; it runs in the media worker's tick.
 */
import { FRAME_MS } from './frame';

export interface SpeechTurnOptions {
  /** voiced time that starts a turn, ms (default 200) */
  startMs?: number;
  /** silence that ends a turn, ms (default 600) */
  stopMs?: number;
}

export class SpeechTurns {
  private readonly startFrames: number;
  private readonly stopFrames: number;
  private voicedRun = 0;
  private silentRun = 0;
  inTurn = false;

  constructor(o: SpeechTurnOptions = {}) {
    this.startFrames = Math.max(1, Math.round((o.startMs ?? 200) / FRAME_MS));
    this.stopFrames = Math.max(1, Math.round((o.stopMs ?? 600) / FRAME_MS));
  }

  /** One frame's decision; 'start' or 'stop' when a turn begins or ends with this frame. */
  push(voiced: boolean): 'start' | 'stop' | null {
    if (voiced) {
      this.voicedRun++;
      this.silentRun = 0;
      if (!this.inTurn && this.voicedRun >= this.startFrames) {
        this.inTurn = true;
        return 'start';
      }
      return null;
    }
    this.silentRun++;
    if (this.silentRun >= 3) this.voicedRun = 0;
    if (this.inTurn && this.silentRun >= this.stopFrames) {
      this.inTurn = false;
      return 'stop';
    }
    return null;
  }
}
