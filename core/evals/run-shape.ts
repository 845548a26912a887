/**
 * An eval run as the API shows it and as its events tell it (issue 56, docs/evals.md): the summary's
 * types (core/evals/summary.ts computes them), the run's JSON (core/repos/eval-runs.ts `evalRunJson`
 * returns this type, so a renamed field breaks its build) and the run events' payloads, each once in zod
 * (core/evals/events.ts publishes them). A wire shape the console takes by `import type`
 * (test/architecture/imports.test.ts WEB_SHAPES): it imports zod and the scenario schema only.
 */
import { z } from 'zod';
import type { EvalCallResult, EvalRunStatus } from './schema';

/** A latency stage's percentiles (ms) over `n` measured turns: nearest rank, so each is a measured value. */
export interface StageLatency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}

/** One check of one scenario (by its place in the scenario), over the calls that judged it. */
export interface CheckTally {
  scenario_id: string;
  index: number;
  type: string;
  passed: number;
  of: number;
}

export interface RunSummary {
  calls: number;
  passed: number;
  pass_rate: number | null;
  checks: CheckTally[];
  latency: Record<string, StageLatency>;
}

export interface CheckMove {
  scenario_id: string;
  index: number;
  type: string;
  /** pass counts before (`from`) and after (`to`) */
  from: { passed: number; of: number };
  to: { passed: number; of: number };
  moved: 'better' | 'worse';
}

export interface LatencyMove {
  stage: string;
  from: { p50: number; p95: number };
  to: { p50: number; p95: number };
  moved: 'faster' | 'slower';
}

export interface Comparison {
  pass_rate: { from: number | null; to: number | null };
  /** the checks whose pass rate differs (a check judged on one side only is not compared) */
  checks: CheckMove[];
  /** the stages whose p50 or p95 moved by LATENCY_MOVE_SHARE and LATENCY_MOVE_MS */
  latency: LatencyMove[];
}

/** GET /eval_runs/{id} (and each run of GET /eval_runs): what `evalRunJson` returns. */
export interface EvalRunJson {
  id: string;
  customer_id: string;
  status: EvalRunStatus;
  scenario_ids: string[];
  calls: number;
  concurrency: number;
  error: string;
  results: EvalCallResult[];
  pass_rate: number | null;
  ai_id: string;
  versions: number[];
  baseline_run_id: string;
  latency: Record<string, StageLatency>;
  checks: CheckTally[];
  by_version: (RunSummary & { version: number })[];
  compare: (Comparison & { from_version: number; to_version: number }) | null;
  baseline: (Comparison & { run_id: string }) | null;
  tm_create: string;
  tm_update: string;
  tm_end: string;
  /** 9999-01-01 00:00:00.000000 (the spec's sentinel) until the run is deleted */
  tm_delete: string;
}

const stage = z.object({ n: z.number().int(), p50: z.number(), p95: z.number(), p99: z.number() });

/** eval_run_created: the run as accepted. */
export const evalRunCreatedPayload = z.object({
  id: z.string(),
  customer_id: z.string(),
  status: z.literal('running'),
  scenario_ids: z.array(z.string()),
  calls: z.number().int().describe('calls per scenario (and per version)'),
  concurrency: z.number().int(),
  planned: z.number().int().describe('every call the run will place: scenarios × calls × versions'),
});

/** eval_run_progressed: one call ended; its result in brief and the run's count so far. */
export const evalRunProgressedPayload = z.object({
  id: z.string(),
  customer_id: z.string(),
  done: z.number().int().describe('calls ended so far'),
  planned: z.number().int(),
  passed: z.number().int().describe('calls so far whose checks all passed'),
  call: z.object({
    scenario_id: z.string(),
    call_id: z.string(),
    sip_call_id: z.string(),
    ended_by: z.enum(['caller', 'agent', 'refused', 'error']),
    ai_version: z.number().int().optional(),
    passed: z.boolean(),
    checks_passed: z.number().int(),
    checks: z.number().int(),
    error: z.string().optional(),
  }),
});

/** eval_run_finished / eval_run_failed: the run's summary (pass rate, latency percentiles of every stage). */
export const evalRunEndedPayload = z.object({
  id: z.string(),
  customer_id: z.string(),
  status: z.enum(['finished', 'failed']),
  error: z.string().describe('why the run failed ("" when finished)'),
  calls: z.number().int().describe('calls ended'),
  passed: z.number().int(),
  pass_rate: z.number().nullable(),
  latency: z.record(z.string(), stage),
});

export type EvalRunCreatedPayload = z.output<typeof evalRunCreatedPayload>;
export type EvalRunProgressedPayload = z.output<typeof evalRunProgressedPayload>;
export type EvalRunEndedPayload = z.output<typeof evalRunEndedPayload>;
