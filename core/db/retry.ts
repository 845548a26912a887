/**
 * Retrying database writes through a short Postgres outage (a restart, a fail-over, a network blip).
 * Only errors that say "the server was not reachable or went away" are retried: refused or reset
 * connections, the server shutting down or starting up (SQLSTATE 57P01-57P03), connection
 * exceptions (class 08), and a connection pool that could not hand out a connection. Anything else
 * (a constraint, a syntax error) fails at once. Callers retry only writes that are safe to repeat:
 * guarded transitions, updates to fixed values, inserts with a fixed id.
 */
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTCONN']);
const TRANSIENT_MESSAGES = [
  /connection terminated/i,
  /terminating connection/i,
  /timeout acquiring a connection/i,
  /connection (?:is )?closed/i,
  /not queryable/i,
  /the database system is (?:starting up|shutting down|in recovery mode)/i,
];

/** True when `err` says the database was unreachable or went away (worth trying again shortly). */
export function isTransientDbError(err: unknown): boolean {
  for (let e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (TRANSIENT_ERRNO.has(code) || /^57P0[123]$/.test(code) || /^08...$/.test(code)) return true;
    if (e.name === 'KnexTimeoutError') return true;
    const msg = typeof e.message === 'string' ? e.message : '';
    if (TRANSIENT_MESSAGES.some((re) => re.test(msg))) return true;
    // AggregateError (a host with several addresses refused on each)
    if (Array.isArray(e.errors) && e.errors.some((x) => isTransientDbError(x))) return true;
    e = e.cause as typeof e;
  }
  return false;
}

export interface RetryOptions {
  /** Give up (rethrow the last error) after this long; default 120 s, longer than a restart takes. */
  deadlineMs?: number;
  /** First wait; doubles per attempt up to maxDelayMs. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Told about each transient failure before the wait (logging). */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

export const DEFAULT_RETRY_DEADLINE_MS = 120_000;

/** Runs `op`; on a transient database error waits and runs it again, until it succeeds or the deadline passes. */
export async function retryTransient<T>(op: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.deadlineMs ?? DEFAULT_RETRY_DEADLINE_MS);
  let delay = opts.firstDelayMs ?? 100;
  const maxDelay = opts.maxDelayMs ?? 2000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!isTransientDbError(err) || Date.now() + delay > deadline) throw err;
      opts.onRetry?.(err, attempt, delay);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(maxDelay, delay * 2);
    }
  }
}

/** The retry function bound to options, for code that takes a `retry` hook. */
export type Retry = <T>(op: () => Promise<T>) => Promise<T>;

export function retrying(opts: RetryOptions = {}): Retry {
  return (op) => retryTransient(op, opts);
}

/**
 * A write of the call lifecycle that must not be lost to a short outage: retried as above, the
 * first transient failure logged once (warn) with what was being written.
 */
export function retryWrite<T>(log: { warn(obj: object, msg: string): void } | undefined, what: string, op: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  return retryTransient(op, {
    ...opts,
    onRetry: (err, attempt, delayMs) => {
      if (attempt === 1) log?.warn({ err: (err as Error)?.message, what }, 'database unreachable: retrying the write');
      opts.onRetry?.(err, attempt, delayMs);
    },
  });
}

/** Postgres unique_violation: an insert retried after its first attempt committed unseen. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505';
}
