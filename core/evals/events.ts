/**
 * An eval run's life as customer events (issue 56, docs/evals.md "Runs as events"): created when the
 * API accepts it, progressed as each call ends (that call's result in brief), finished or failed with the
 * run's summary. Each payload is defined once, in zod, in ./run-shape.ts (the console reads it too); they
 * go through the ordinary event stream, so the customer's webhooks and WebSocket subscriptions (topic
 * `customer_id:<cid>:eval_run:<id>`) receive them.
 */
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent } from '../events/catalogue';
import type { EvalCallResult } from './schema';
import { summarize } from './summary';
import { evalRunCreatedPayload, evalRunEndedPayload, evalRunProgressedPayload, type EvalRunCreatedPayload, type EvalRunEndedPayload, type EvalRunProgressedPayload } from './run-shape';

export { evalRunCreatedPayload, evalRunEndedPayload, evalRunProgressedPayload, type EvalRunCreatedPayload, type EvalRunEndedPayload, type EvalRunProgressedPayload };

interface RunRef {
  id: string;
  customer_id: string;
}

export function createdPayload(run: RunRef & { scenarios: { id: string }[]; calls: number; concurrency: number; versions: number[] }): EvalRunCreatedPayload {
  const planned = run.scenarios.length * run.calls * Math.max(1, run.versions.length);
  return evalRunCreatedPayload.parse({
    id: run.id,
    customer_id: run.customer_id,
    status: 'running',
    scenario_ids: run.scenarios.map((s) => s.id),
    calls: run.calls,
    concurrency: run.concurrency,
    planned,
  });
}

export function progressedPayload(run: RunRef, planned: number, results: EvalCallResult[], last: EvalCallResult): EvalRunProgressedPayload {
  const { scenario_id, call_id, sip_call_id, ended_by, ai_version, passed, error } = last;
  const call = {
    scenario_id,
    call_id,
    sip_call_id,
    ended_by,
    passed,
    checks_passed: last.checks.filter((c) => c.passed).length,
    checks: last.checks.length,
    ...(ai_version === undefined ? {} : { ai_version }),
    ...(error ? { error } : {}),
  };
  return evalRunProgressedPayload.parse({ id: run.id, customer_id: run.customer_id, done: results.length, planned, passed: results.filter((r) => r.passed).length, call });
}

export function endedPayload(run: RunRef, status: 'finished' | 'failed', error: string, results: EvalCallResult[]): EvalRunEndedPayload {
  const s = summarize(results);
  return evalRunEndedPayload.parse({ id: run.id, customer_id: run.customer_id, status, error, calls: s.calls, passed: s.passed, pass_rate: s.pass_rate, latency: s.latency });
}

/**
 * Publishes one of the run's events. A publish that fails (Redis away) is logged by the caller and does
 * not end the run: the run's row stays the record, the events are its notifications.
 */
export async function publishRunEvent(
  publisher: EventPublisher,
  type: 'eval_run_created' | 'eval_run_progressed' | 'eval_run_finished' | 'eval_run_failed',
  payload: EvalRunCreatedPayload | EvalRunProgressedPayload | EvalRunEndedPayload,
): Promise<void> {
  await publishResourceEvent(publisher, type, payload);
}
