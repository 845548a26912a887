/**
 * The credit rule for answered PSTN calls (charged per started minute when they end, core/billing/call-end.ts):
 * a call may go on while the customer's balance pays every minute its live calls have started, and a
 * call may start its next minute only when the balance pays that minute too. The credit guard of each
 * media-app node (media-app/billing) applies it to the calls it owns, looking `horizon` ahead.
 */
export interface LiveCharge {
  id: string;
  /** When the call was answered (billing starts). */
  tm_progressing: Date;
}

const MINUTE = 60_000;

/** Minutes started by `at` (an answered call has started its first minute). */
export function minutesStarted(c: LiveCharge, at: number): number {
  return Math.max(1, Math.ceil((at - c.tm_progressing.getTime()) / MINUTE));
}

/**
 * Which of `own` (this node's calls among `all`, one customer's answered chargeable calls) must end
 * now: all of them when the balance no longer pays the minutes already started; otherwise those
 * that would start a minute before `horizon` that the balance cannot pay (the newest go first).
 */
export function callsToEnd(all: readonly LiveCharge[], own: ReadonlySet<string>, balance: number, rate: number, now: number, horizon: number): string[] {
  if (rate <= 0 || all.length === 0) return [];
  const budget = Math.floor(Math.max(0, balance) / rate);
  const started = all.reduce((n, c) => n + minutesStarted(c, now), 0);
  if (started > budget) return all.filter((c) => own.has(c.id)).map((c) => c.id);
  let left = budget - started;
  const cut: string[] = [];
  const oldestFirst = [...all].sort((a, b) => a.tm_progressing.getTime() - b.tm_progressing.getTime());
  for (const c of oldestFirst) {
    const more = minutesStarted(c, horizon) - minutesStarted(c, now);
    if (more === 0) continue;
    if (more <= left) left -= more;
    else if (own.has(c.id)) cut.push(c.id);
  }
  return cut;
}
