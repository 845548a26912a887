// Polling waits: a condition read again every few ms until it holds or a time limit passes, for what gives
// no event to await (a database row, a worker's figures, another process's state). Two forms of one loop:
// `until` gives the condition's value and throws naming what it waited for at its limit (the wait is the
// assertion); `within` says whether it held in time (the caller asserts with its own message, or reads
// what is missing). The wait's own timer only: nothing is left armed when it returns.

/** `fn`'s first truthy value within `ms` (read every `everyMs`), or undefined once `ms` have passed. */
async function poll<T>(fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms: number, everyMs: number): Promise<T | undefined> {
  const end = performance.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (performance.now() >= end) return undefined;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** `fn`'s first truthy value, read every 50 ms; throws `timeout waiting for <what>` once `timeoutMs` have passed. */
export async function until<T>(fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const v = await poll(fn, timeoutMs, 50);
  if (v === undefined) throw new Error(`timeout waiting for ${what}`);
  return v;
}

/** Whether `check` became true within `ms` (read every 20 ms); the caller asserts it. */
export async function within(check: () => boolean | Promise<boolean>, ms = 3000): Promise<boolean> {
  return (await poll(check, ms, 20)) === true;
}
