// Waits on a count that only grows (the packets or voiced packets a test party got, the packets a leg's
// endpoint received) in place of "sleep N ms to settle, then count over a window": each wait starts at
// a defined point (the call to it) and ends on what was counted, so a loaded machine makes it slower,
// never wrong. Each sample is taken after an I/O poll (setImmediate after the timer), so packets that
// waited in a socket while the loop was busy are counted before the count is read.

/** A count that only grows; an endpoint's stats are read asynchronously. */
export type Count = () => number | Promise<number>;

const STEP_MS = 10;

/** A sample of `count` after a timer and an I/O poll: what arrived meanwhile is counted. */
async function sample(count: Count, ms = STEP_MS): Promise<number> {
  await new Promise<void>((r) => setTimeout(r, ms));
  await new Promise<void>((r) => setImmediate(r));
  return count();
}

/**
 * Resolves once `count` has grown by `n` from its value now (the first packet of a new direction is
 * `n` = 1); rejects naming `what` and the growth seen when it has not within `ms`. Gives the ms taken.
 */
export async function grows(count: Count, n: number, ms: number, what: string): Promise<number> {
  const t0 = performance.now();
  const from = await count();
  for (;;) {
    // sampled before the bound is read: a loop that was busy past it still counts what arrived meanwhile
    const now = await sample(count);
    if (now - from >= n) return performance.now() - t0;
    if (performance.now() - t0 > ms) throw new Error(`${what}: ${now - from} of ${n} within ${ms} ms`);
  }
}

/**
 * An absence: first `count` stands still for `gapMs` (what was in flight when the change took effect
 * has arrived; bounded by `settleMs`, a count that never stops fails here), then it grows by at most
 * `allow` over the next `ms`. Rejects naming `what` and the growth seen.
 *
 * The default `settleMs` (5 s) lets the unwanted signal go on that long before the absence is measured:
 * where the timing of the change is what is tested (music that must stop at an unhold), pass what can be
 * in flight when the change has taken effect (a few hundred ms), so a signal that stops late fails.
 */
export async function silentFor(count: Count, ms: number, what: string, o: { gapMs?: number; settleMs?: number; allow?: number } = {}): Promise<void> {
  const gapMs = o.gapMs ?? 100;
  const settleMs = o.settleMs ?? 5000;
  const t0 = performance.now();
  let last = await count();
  let still = t0;
  for (;;) {
    const now = await sample(count);
    const t = performance.now();
    if (now !== last) [last, still] = [now, t];
    else if (t - still >= gapMs) break;
    if (t - t0 > settleMs) throw new Error(`${what}: still growing ${settleMs} ms on (no ${gapMs} ms without one)`);
  }
  const start = performance.now();
  let now = last;
  while (performance.now() - start < ms) {
    now = await sample(count, Math.min(50, ms));
    if (now - last > (o.allow ?? 0)) throw new Error(`${what}: ${now - last} more within ${ms} ms (at most ${o.allow ?? 0})`);
  }
}
