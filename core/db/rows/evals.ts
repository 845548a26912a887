/** Row types of core/repos/eval-scenarios.ts and eval-runs.ts, declared apart so core/db/tables.ts imports no repository. */
import type { EvalCallResult, EvalCaller, EvalCheck, EvalRunStatus, EvalTarget } from '../../evals/schema';

export interface EvalScenarioRow {
  id: string;
  customer_id: string;
  name: string;
  target: EvalTarget;
  caller: EvalCaller;
  checks: EvalCheck[];
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

/** A scenario as a run keeps it (its id, name and content when the run was made). */
export type EvalRunScenario = Pick<EvalScenarioRow, 'id' | 'name' | 'target' | 'caller' | 'checks'>;

export interface EvalRunRow {
  id: string;
  customer_id: string;
  status: EvalRunStatus;
  scenarios: EvalRunScenario[];
  calls: number;
  concurrency: number;
  results: EvalCallResult[];
  error: string;
  claimed_by: string | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_end: Date | null;
}
