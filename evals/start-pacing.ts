/**
 * The spacing of a run's call starts (EVALS_CALL_SPACING_MS): each call of a run is placed at least
 * `spacingMs` after the one before it, whichever lane places it, so `concurrency` calls reach the
 * platform as a ramp (one every `spacingMs`), as independent callers do, instead of all in the same
 * instant with the same script: then every call's turns fell in the same second too, and what the run
 * measured at 50 calls was 50 simultaneous turns, not an agent carrying 50 calls (docs/evals.md
 * "Performance"). 0 (the default): every lane places its call at once.
 */
export class StartPacing {
  /** when the next call may start (performance.now()) */
  private nextAt = 0;

  constructor(private readonly spacingMs: number) {}

  /**
   * Resolves when the caller's call may start, its slot taken; the first call's slot is now. Rejects with
   * the signal's reason when `signal` aborts first (its timer cleared): the run is stopping.
   */
  slot(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const now = performance.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + this.spacingMs;
    if (at <= now) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, at - now);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
