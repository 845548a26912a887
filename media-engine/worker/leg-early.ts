/**
 * What a leg receives, handed on as it comes rather than when it is played (docs/ai.md "Turn-taking"):
 * a fork started `early` (an AI's recogniser and VAD) gets each frame of the caller in the tick its
 * packet was read, not the jitter buffer's depth later (two frames, 40 ms, more once it grew).
 *
 * Frames go in order, each once, at the leg's rate: one that came whole goes as soon as every frame
 * before it has gone; one missing (lost, late, a partial packet) holds those after it until the playout
 * point reaches it, and goes then as played (concealed, or silence). Frames the playout point passes
 * before any packet (the buffer's first delay) are not handed on. With echo cancellation on, the
 * canceller runs here, on each frame as it goes, against the frames the leg sent, in order: a queue,
 * one sent frame per frame received, so a burst or a gap keeps the two streams in step; what is played
 * later is the frame cleaned, and everything else (detectors, recorders, forks at the tick, peers) hears
 * that. A frame that must go with no sent frame queued is cleaned against silence (a slip of a frame
 * the filter re-learns); a queue past QUEUE_MAX drops its oldest.
 */
import type { JitterBuffer } from '../jitter/jitter-buffer';
import type { LegEchoCanceller } from './leg-aec';

/** sent frames kept for the canceller: more than the jitter buffer's deepest (8 frames) */
const QUEUE_MAX = 16;

export class EarlyIn {
  /** the timestamp of the next frame to hand on, valid for the jitter buffer's start `starts` */
  private next = 0;
  private starts = -1;
  private readonly queue: Int16Array[] = [];
  private readonly pool: Int16Array[] = [];
  private silence: Int16Array;
  /**
   * Made while the canceller already ran at the playout point: the frames already waiting in the buffer
   * have no sent frame queued for them (those went with the frames played before), so at the first
   * receive they are cleaned against silence, a one-time slip of the filter's path by the buffer's depth.
   */
  private fresh: boolean;

  constructor(
    private rate: number,
    cancelling: boolean,
  ) {
    this.silence = new Int16Array(rate / 50);
    this.fresh = cancelling;
  }

  /** The frame the leg sent last tick (the canceller's far end), queued; the queue starts over at a new rate. */
  sent(frame: Int16Array, rate: number): void {
    if (rate !== this.rate) this.restart(rate);
    this.push(frame);
  }

  /** Ticks the worker could not run: the far end had silence from the leg meanwhile (the RTP clock went on). */
  silent(ticks: number): void {
    for (let k = 0; k < Math.min(ticks, QUEUE_MAX); k++) this.push(this.silence);
  }

  /**
   * After the tick's pop into `played` (`hasIn` as the pop said): the frame played, when no frame
   * handed on before covered it, is cleaned (by `aec`, when on) and given to `hand` (null: silence);
   * then every frame after it that came whole. Frames the playout point passed unhandled (the buffer
   * gave one back) still take their sent frame, so the two streams stay in step.
   */
  receive(jb: JitterBuffer, hasIn: boolean, played: Int16Array, rate: number, aec: LegEchoCanceller | null, hand: (frame: Int16Array | null) => void): void {
    if (rate !== this.rate) this.restart(rate);
    const frame = rate / 50;
    if (!hasIn) {
      // nothing received: the canceller's far end goes on (silence in), forks get silence
      this.starts = -1;
      this.clean(null, aec);
      hand(null);
      return;
    }
    if (jb.starts !== this.starts) {
      // a new start (first packet, new source, a jump): from the oldest audio held, against the newest frame sent
      this.starts = jb.starts;
      this.next = jb.oldestTs ?? jb.poppedTs;
      while (this.queue.length > 1) this.pool.push(this.queue.shift()!);
    }
    const behind = (jb.poppedTs - this.next) | 0;
    if (behind >= 0) {
      for (let k = Math.min(behind / frame, QUEUE_MAX); k >= 1; k--) this.clean(null, aec);
      this.clean(played, aec);
      // written back: should the buffer grow, the frame played again is the one cleaned
      if (aec) jb.poppedFrame()?.set(played);
      hand(played);
      this.next = (jb.poppedTs + frame) | 0;
    }
    for (;;) {
      if (aec && this.queue.length === 0 && !this.fresh) break; // its sent frame is not there yet: next tick
      const f = jb.frameAt(this.next);
      if (!f) break;
      this.clean(f, aec);
      hand(f);
      this.next = (this.next + frame) | 0;
    }
    this.fresh = false;
    // audio for a frame handed on already is refused from now on (the buffer would play it unheard)
    jb.floor = this.next;
  }

  /**
   * Between the leg's ticks (the engine's other phases): the frames that came whole since, in order,
   * each once, cleaned against the sent frames queued. What the tick alone decides (a new start, a
   * missing frame, nothing received) waits for it; so does a frame whose sent frame is not queued yet.
   */
  between(jb: JitterBuffer, rate: number, aec: LegEchoCanceller | null, hand: (frame: Int16Array | null) => void): void {
    if (rate !== this.rate || this.starts < 0 || jb.starts !== this.starts || this.fresh) return;
    const frame = rate / 50;
    const from = this.next;
    for (;;) {
      if (aec && this.queue.length === 0) break;
      const f = jb.frameAt(this.next);
      if (!f) break;
      this.clean(f, aec);
      hand(f);
      this.next = (this.next + frame) | 0;
    }
    if (this.next !== from) jb.floor = this.next;
  }

  private push(frame: Int16Array): void {
    if (this.queue.length >= QUEUE_MAX) this.pool.push(this.queue.shift()!);
    const f = this.pool.pop() ?? new Int16Array(frame.length);
    f.set(frame);
    this.queue.push(f);
  }

  /** `near` (null: nothing) cleaned in place against the next sent frame queued (silence when none is). */
  private clean(near: Int16Array | null, aec: LegEchoCanceller | null): void {
    if (!aec) return;
    const far = this.queue.shift();
    aec.cancel(near, far ?? this.silence, this.rate);
    if (far) this.pool.push(far);
  }

  private restart(rate: number): void {
    this.rate = rate;
    this.silence = new Int16Array(rate / 50);
    this.queue.length = 0;
    this.pool.length = 0;
    this.starts = -1;
  }
}
