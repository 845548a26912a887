/**
 * Messages between media-app's main thread and the Silero VAD thread (silero-worker.ts): a closed
 * union each way, checked on arrival like media-engine/worker/protocol.ts.
 */

/** Silero VAD v5 takes 8 or 16 kHz; a window is 256 or 512 samples (32 ms) after a 32/64-sample context. */
export type SileroRate = 8000 | 16000;

export const WINDOW: Record<SileroRate, number> = { 8000: 256, 16000: 512 };
export const CONTEXT: Record<SileroRate, number> = { 8000: 32, 16000: 64 };

export type ToSilero =
  /** a session starts: its audio comes at `rate` */
  | { t: 'open'; id: number; rate: SileroRate }
  /** audio of a session (any length; the thread cuts it into windows) */
  | { t: 'audio'; id: number; pcm: Int16Array }
  | { t: 'close'; id: number };

export type FromSilero =
  | { t: 'ready' }
  /** speech probabilities of a session's next windows, in order */
  | { t: 'probs'; id: number; probs: Float32Array }
  /** the model could not be loaded or run: every session ends with this */
  | { t: 'failed'; message: string };

export function isToSilero(m: unknown): m is ToSilero {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (typeof o.id !== 'number') return false;
  if (o.t === 'open') return o.rate === 8000 || o.rate === 16000;
  if (o.t === 'audio') return o.pcm instanceof Int16Array;
  return o.t === 'close';
}

export function isFromSilero(m: unknown): m is FromSilero {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (o.t === 'ready') return true;
  if (o.t === 'probs') return typeof o.id === 'number' && o.probs instanceof Float32Array;
  return o.t === 'failed' && typeof o.message === 'string';
}
