/**
 * The process clock. Everything that stores or compares a time reads it here, so tests can freeze and
 * move time (lifecycle jobs, token expiry, rate-limit buckets) without sleeping.
 */
let frozenAt: number | null = null;
let offsetMs = 0;

export const clock = {
  /** Milliseconds since the epoch. */
  nowMs(): number {
    return frozenAt ?? Date.now() + offsetMs;
  },
  now(): Date {
    return new Date(this.nowMs());
  },
  /** Freeze the clock at a given instant (Date or epoch ms). */
  setNow(at: Date | number): void {
    frozenAt = typeof at === 'number' ? at : at.getTime();
  },
  /** Move the clock forward; works both frozen and running. */
  advance(ms: number): void {
    if (frozenAt !== null) frozenAt += ms;
    else offsetMs += ms;
  },
  /** Back to the real wall clock. */
  reset(): void {
    frozenAt = null;
    offsetMs = 0;
  },
  isFrozen(): boolean {
    return frozenAt !== null;
  },
};
