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
  /**
   * audio of sessions, all that the main thread wrote in one turn of its event loop (one message a
   * tick for every call, so the thread sees every call's frame of the tick at once): session
   * `ids[i]` wrote `sizes[i]` samples, in order, concatenated in `pcm` (any length; the thread cuts windows)
   */
  | { t: 'audio'; ids: number[]; sizes: number[]; pcm: Int16Array }
  | { t: 'close'; id: number };

export type FromSilero =
  | { t: 'ready' }
  /** one run of the model: the speech probability of the next window of each session `ids[i]` */
  | { t: 'probs'; ids: number[]; probs: Float32Array }
  /** the model could not be loaded or run: every session ends with this */
  | { t: 'failed'; message: string };

export function isToSilero(m: unknown): m is ToSilero {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (o.t === 'audio') {
    if (!Array.isArray(o.ids) || !Array.isArray(o.sizes) || !(o.pcm instanceof Int16Array) || o.ids.length !== o.sizes.length) return false;
    let total = 0;
    for (const n of o.sizes as unknown[]) total += typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : NaN;
    return total === o.pcm.length && (o.ids as unknown[]).every((id) => typeof id === 'number');
  }
  if (typeof o.id !== 'number') return false;
  if (o.t === 'open') return o.rate === 8000 || o.rate === 16000;
  return o.t === 'close';
}

export function isFromSilero(m: unknown): m is FromSilero {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (o.t === 'ready') return true;
  if (o.t === 'probs') return Array.isArray(o.ids) && o.probs instanceof Float32Array && o.ids.length === o.probs.length;
  return o.t === 'failed' && typeof o.message === 'string';
}
