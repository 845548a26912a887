// Bounded waits for tests: a wait on a promise or an emitter's event that rejects naming what it waited
// for when it has not come within its time, instead of mocha's bare timeout. The timer is the wait's own,
// cleared when the wait settles either way.
import { once, type EventEmitter } from 'node:events';

/** `p`'s outcome, or a rejection `<what>: not within <ms> ms` when it has not settled by then. */
export async function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The arguments of `emitter`'s next `event`, bounded as bounded(); an 'error' meanwhile rejects (events.once). */
export function boundedOnce(emitter: EventEmitter, event: string, ms: number, what: string): Promise<unknown[]> {
  const ac = new AbortController();
  return bounded(once(emitter, event, { signal: ac.signal }), ms, what).finally(() => ac.abort());
}
