/** The soak's pacing (testkit/reliability/soak.ts, soak-ai.ts): waves every so many seconds, call durations. */
import type { SoakOptions } from './soak';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Seconds of a call: log-uniform in [min, max], at most `cap`. */
export function duration(o: Pick<SoakOptions, 'minCallSeconds' | 'maxCallSeconds'>, cap: number): number {
  const d = Math.exp(Math.log(o.minCallSeconds) + Math.random() * (Math.log(o.maxCallSeconds) - Math.log(o.minCallSeconds)));
  return Math.max(1, Math.min(d, cap));
}

/** Every `everyS` seconds until `end`: `fn` (not awaited: waves overlap); resolves when all have. */
export async function every(everyS: number, end: number, fn: () => Promise<void> | null): Promise<void> {
  const running: Promise<void>[] = [];
  while (Date.now() < end) {
    const p = fn();
    if (p) running.push(p);
    await sleep(Math.min(everyS * 1000, Math.max(0, end - Date.now())));
  }
  await Promise.all(running);
}
