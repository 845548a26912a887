/**
 * When each frame of an audio stream was written (Date.now()), for the last 30 s of 20 ms frames:
 * dates a position in the stream (a transcript's end, a VAD verdict's offset) by when its audio was
 * written, not by when the verdict arrived (the recogniser, the Silero VAD session).
 */
const TIMED_FRAMES = 1500;

export class FrameClock {
  private readonly writtenAt = new Float64Array(TIMED_FRAMES);
  private written = 0;
  private frameMs = 20;

  /** A frame of `samples` at `rate` was written at `at`. */
  write(samples: number, rate: number, at: number): void {
    this.frameMs = Math.max(1, Math.round((samples * 1000) / rate));
    this.writtenAt[this.written % TIMED_FRAMES] = at;
    this.written++;
  }

  /** A new stream starts (its positions count from 0 again). */
  reset(): void {
    this.written = 0;
  }

  /** The wall time the audio `ms` into the stream was written; null when not known (older than 30 s, not written yet). */
  wallTimeOf(ms: number): number | null {
    // frame i holds [i, i + 1) frames of audio and was written once it had all of it
    const i = Math.max(0, Math.ceil(ms / this.frameMs) - 1);
    if (!Number.isFinite(i) || i >= this.written || i < this.written - TIMED_FRAMES) return null;
    return this.writtenAt[i % TIMED_FRAMES]! - ((i + 1) * this.frameMs - ms);
  }
}
