/**
 * A request's deadline joined to the run's signal, owned by the request: `signal` aborts when the run's
 * does (with its reason) or when `ms` pass (with "<what> took longer than <ms> ms"); `end()`, called
 * when the request settles, clears the timer and takes the listener off the run's signal, so neither
 * outlives the request (AbortSignal.timeout's timer would run on, and fire, after it).
 */
export interface Deadline {
  readonly signal: AbortSignal;
  end(): void;
}

export function deadline(run: AbortSignal, ms: number, what: string): Deadline {
  const own = new AbortController();
  const onRun = () => own.abort(run.reason);
  if (run.aborted) onRun();
  else run.addEventListener('abort', onRun, { once: true });
  const timer = setTimeout(() => own.abort(new Error(`${what} took longer than ${ms} ms`)), ms);
  return {
    signal: own.signal,
    end() {
      clearTimeout(timer);
      run.removeEventListener('abort', onRun);
    },
  };
}
