/**
 * Time as the runner sees it. The live runner uses wall-clock timers; the simulator a virtual clock,
 * which must also know about real I/O in flight (HTTP) so it does not jump ahead while it runs.
 */
export interface FlowClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms; rejects with an AbortError when signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Marks real work in flight (the simulator waits for it before moving time on). */
  track<T>(p: Promise<T>): Promise<T>;
}

export function abortError(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const e = new Error(typeof reason === 'string' ? reason : 'aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * Calls `fn` once when `signal` aborts; the returned function removes the listener (call it when the wait
 * ends any other way). A listener left on an action's signal (an AbortSignal.any()) keeps that signal and
 * all the listener holds alive until the flow's signal aborts, which a normal end never does.
 */
export function onceAborted(signal: AbortSignal, fn: () => void): () => void {
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

export function isAbortError(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || e.name === 'FlowAbort');
}

export const realClock: FlowClock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal));
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  track: (p) => p,
};
