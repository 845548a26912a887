/**
 * Messages between media-app's main thread and the Silero VAD thread (silero-worker.ts): a closed
 * union each way, checked on arrival like media-engine/worker/protocol.ts.
 */

/** Silero VAD v5 takes 8 or 16 kHz; a window is 256 or 512 samples (32 ms) after a 32/64-sample context. */
export type SileroRate = 8000 | 16000;

export const WINDOW: Record<SileroRate, number> = { 8000: 256, 16000: 512 };
export const CONTEXT: Record<SileroRate, number> = { 8000: 32, 16000: 64 };

export type ToSilero =
  /**
   * a session starts: its audio comes at `rate`; a window whose RMS is under `quiet` (linear, full
   * scale 1; 0: none) is silence without a run of the model
   */
  | { t: 'open'; id: number; rate: SileroRate; quiet: number }
  /**
   * audio of sessions, all that the main thread wrote in one turn of its event loop (one message a
   * tick for every call, so the thread sees every call's frame of the tick at once): session
   * `ids[i]` wrote `sizes[i]` samples, in order, concatenated in `pcm` (any length; the thread cuts windows)
   */
  | { t: 'audio'; ids: number[]; sizes: number[]; pcm: Int16Array }
  | { t: 'close'; id: number };

export type FromSilero =
  | { t: 'ready' }
  /**
   * the speech probability of the next window of each session `ids[i]`: `runs` runs of the model
   * (0 or 1) took `probs.length - gated` of them; `gated` were quiet (probability 0 without the model)
   */
  | { t: 'probs'; ids: number[]; probs: Float32Array; runs: number; gated: number }
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
  if (o.t === 'open') return (o.rate === 8000 || o.rate === 16000) && typeof o.quiet === 'number' && o.quiet >= 0 && o.quiet < 1;
  return o.t === 'close';
}

export function isFromSilero(m: unknown): m is FromSilero {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  if (o.t === 'ready') return true;
  if (o.t === 'probs') {
    if (!Array.isArray(o.ids) || !(o.probs instanceof Float32Array) || o.ids.length !== o.probs.length) return false;
    return (o.runs === 0 || o.runs === 1) && Number.isInteger(o.gated) && (o.gated as number) >= 0 && (o.gated as number) <= o.ids.length;
  }
  return o.t === 'failed' && typeof o.message === 'string';
}
