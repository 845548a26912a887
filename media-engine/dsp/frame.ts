/**
 * The frame format every media-engine module agrees on: 20 ms of 8 kHz, 16-bit linear, mono audio,
 * i.e. an Int16Array of 160 samples. Modules never keep a reference to a frame passed to them.
 */
export const SAMPLE_RATE = 8000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = 160;

export type Frame = Int16Array;

/**
 * The level under which a line is quiet (RMS, dBFS): under a phone line's noise at speech level, far
 * under speech. What is quieter costs nothing where it is only silence: no Silero VAD run
 * (media-app/ai/vad), no message of its own to a cloud recogniser (stt/cloud.ts).
 */
export const QUIET_LINE_DBFS = -55;

/** Mean square of a frame (0 for none): its RMS squared, in the samples' scale. */
export function meanSquare(f: Frame | null): number {
  if (!f || f.length === 0) return 0;
  let s = 0;
  for (let i = 0; i < f.length; i++) s += f[i]! * f[i]!;
  return s / f.length;
}

/** A fresh silent frame (allocates: call once, outside the 20 ms hot path). */
export function silentFrame(): Frame {
  return new Int16Array(FRAME_SAMPLES);
}

/** Milliseconds covered by `samples` samples at 8 kHz. */
export function samplesToMs(samples: number): number {
  return (samples * 1000) / SAMPLE_RATE;
}

/** Mean absolute amplitude of a frame (0..32768), the measure app_amd's silence threshold uses. */
export function meanAbs(frame: Frame): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) {
    const s = frame[i];
    sum += s < 0 ? -s : s;
  }
  return sum / frame.length;
}

/** Sum of squares of a frame (energy), in floating point. */
export function energy(frame: Frame, start = 0, end = frame.length): number {
  let e = 0;
  for (let i = start; i < end; i++) e += frame[i] * frame[i];
  return e;
}

/**
 * A pull-based audio source (tones, files, TTS output). The caller owns `out` and reuses it every
 * tick; the source fills all 160 samples (zero-padding its last frame) and returns true, or returns
 * false once it has nothing more to give (then `out` is left untouched).
 */
export interface FrameSource {
  readFrame(out: Frame): boolean;
  /**
   * A wideband source (a prompt or TTS above 8 kHz): 20 ms at 16 kHz (320 samples) into `out`, for a
   * wideband leg, instead of `readFrame`'s 8 kHz; same contract otherwise.
   */
  readWideFrame?(out: Int16Array): boolean;
  /** True once the last frame has been read (lets a player move on in the same tick). Optional: without it the end shows as a false readFrame. */
  readonly exhausted?: boolean;
  /** Release files or other resources; reading after close returns false. */
  close?(): void;
}
