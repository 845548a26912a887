/**
 * The end of one benchmark run (run.ts): the run's `eval_run_finished` / `eval_run_failed` event on its
 * topic (`customer_id:<cid>:eval_run:<id>`, docs/evals.md "Runs as events"), awaited against a deadline
 * computed from the run's shape. A run that has not ended by then fails the benchmark: a bench bounded
 * in time, not one that polls the run's row for ever.
 */
import type { Redis } from 'ioredis';
import { EventSubscriber, type PlatformEvent } from '../../../core/events/bus';
import { topicOf } from '../../../core/events/catalogue';

/** What bounds one simulated call: the answer's wait, the scenario's own length, then the records' settle wait. */
export interface CallBounds {
  answerTimeoutMs: number;
  /** the scenario's turns: its waits plus the time its lines take to say */
  callMs: number;
  settleMs: number;
}

/** Slack for the run's claim (the worker's poll), the callers' speech synthesis and the result's writes. */
const SLACK_MS = 30_000;

/**
 * By when a run of `calls` calls at `concurrency` must have ended: one wave of concurrent calls after
 * another, each wave at most one call's bounds, plus the slack.
 */
export function runDeadlineMs(calls: number, concurrency: number, b: CallBounds): number {
  const waves = Math.ceil(calls / Math.max(1, concurrency));
  return waves * (b.answerTimeoutMs + b.callMs + b.settleMs) + SLACK_MS;
}

/**
 * Subscribes before the run is created (`create`, answering its id), then waits for its end event.
 * Rejects when `deadlineMs` passes first. The subscriber's connection is `redis` duplicated, closed after;
 * `stream`: the platform's event stream, eventStreamKey(REDIS_KEY_PREFIX) (or a test's own).
 */
export async function awaitRunEnd(redis: Redis, customerId: string, create: () => Promise<string>, deadlineMs: number, stream: string): Promise<PlatformEvent> {
  const conn = redis.duplicate();
  conn.on('error', () => undefined); // the subscriber reports its read errors as 'error' events below
  const sub = new EventSubscriber(conn, { stream, blockMs: 500 });
  let timer: NodeJS.Timeout | undefined;
  try {
    await sub.start();
    // end events read before the run's id is known are kept, then looked through once it is
    const seen: PlatformEvent[] = [];
    let topic = '';
    let done: ((e: PlatformEvent) => void) | null = null;
    const isEnd = (e: PlatformEvent) => (e.event_type === 'eval_run_finished' || e.event_type === 'eval_run_failed') && topicOf(e) === topic;
    const ended = new Promise<PlatformEvent>((resolve, reject) => {
      done = resolve;
      timer = setTimeout(() => reject(new Error(`the run did not end within its deadline (${Math.round(deadlineMs / 1000)} s)`)), deadlineMs);
    });
    ended.catch(() => undefined); // a deadline passing while create() runs is read below
    sub.on('event', (e: PlatformEvent) => {
      if (!topic) {
        if (e.event_type === 'eval_run_finished' || e.event_type === 'eval_run_failed') seen.push(e);
      } else if (isEnd(e)) done?.(e);
    });
    sub.on('error', (err: unknown) => console.error(`event stream: ${String(err)}`));
    const id = await create();
    topic = `customer_id:${customerId}:eval_run:${id}`;
    const early = seen.find(isEnd);
    if (early) return early;
    return await ended;
  } finally {
    clearTimeout(timer);
    await sub.stop();
    conn.disconnect();
  }
}
