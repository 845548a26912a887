/**
 * eval_runs: runs of eval scenarios (issue 56, docs/evals.md). A run is made `running` and unclaimed;
 * one evals worker claims it (a guarded UPDATE, so two workers never both run it), writes each call's
 * result as it comes, and ends it `finished` or `failed`.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { EvalCallResult } from '../evals/schema';
import type { EvalRunRow, EvalRunScenario } from '../db/rows/evals';
export type { EvalRunRow } from '../db/rows/evals';

export function evalRunJson(r: EvalRunRow) {
  const passed = r.results.filter((x) => x.passed).length;
  return {
    id: r.id,
    customer_id: r.customer_id,
    status: r.status,
    scenario_ids: r.scenarios.map((s) => s.id),
    calls: r.calls,
    concurrency: r.concurrency,
    error: r.error,
    results: r.results,
    pass_rate: r.results.length ? passed / r.results.length : null,
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_end: formatLegacy(r.tm_end),
  };
}

export function evalRunsRepo(db: Db) {
  return {
    async create(customerId: string, input: { scenarios: EvalRunScenario[]; calls: number; concurrency: number }): Promise<EvalRunRow> {
      const [row] = await db('eval_runs')
        .insert({ id: newId(), customer_id: customerId, status: 'running', scenarios: JSON.stringify(input.scenarios), calls: input.calls, concurrency: input.concurrency, tm_create: clock.now() })
        .returning('*');
      return row!;
    },
    async get(customerId: string, id: string): Promise<EvalRunRow | null> {
      return (await db('eval_runs').where({ id, customer_id: customerId }).first()) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<EvalRunRow>> {
      return toPage(await paginate<EvalRunRow>(db('eval_runs').where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /** Claims the oldest unclaimed running run for `worker`, or null when there is none (another worker may win the race). */
    async claim(worker: string): Promise<EvalRunRow | null> {
      const [row] = await db('eval_runs')
        .whereIn('id', db('eval_runs').select('id').where({ status: 'running' }).whereNull('claimed_by').orderBy('tm_create').limit(1).forUpdate().skipLocked())
        .whereNull('claimed_by')
        .update({ claimed_by: worker, tm_update: clock.now() })
        .returning('*');
      return row ?? null;
    },
    /** The results so far of a run this worker holds. */
    async saveResults(id: string, worker: string, results: EvalCallResult[]): Promise<void> {
      await db('eval_runs')
        .where({ id, claimed_by: worker, status: 'running' })
        .update({ results: JSON.stringify(results), tm_update: clock.now() });
    },
    /** Ends a run this worker holds. */
    async end(id: string, worker: string, status: 'finished' | 'failed', results: EvalCallResult[], error = ''): Promise<void> {
      const now = clock.now();
      await db('eval_runs')
        .where({ id, claimed_by: worker, status: 'running' })
        .update({ status, results: JSON.stringify(results), error, tm_update: now, tm_end: now });
    },
  };
}
