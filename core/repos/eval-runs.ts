/**
 * eval_runs: runs of eval scenarios (issue 56, docs/evals.md). A run is made `running` and unclaimed;
 * one evals worker claims it (a guarded UPDATE, so two workers never both run it), writes each call's
 * result as it comes, and ends it `finished` or `failed`. The claim is a lease: the worker renews
 * tm_update while it carries the run; a run whose lease lapsed (its worker died) is ended `failed` by
 * any worker's sweep (failLapsed), never run again.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { EvalCallResult } from '../evals/schema';
import { compareSummaries, summarize } from '../evals/summary';
import type { EvalRunJson } from '../evals/run-shape';
import { EMPTY_UUID, newId } from '../ids';
import type { EvalRunRow, EvalRunScenario } from '../db/rows/evals';
import { evalAudioRepo } from './eval-audio';
export type { EvalRunRow } from '../db/rows/evals';

/** The run's summaries: all calls, each version's (a run over versions), and what moved (two versions; the baseline). */
function summariesOf(r: EvalRunRow, baseline: EvalRunRow | null) {
  const all = summarize(r.results);
  const byVersion = r.versions.map((version) => ({ version, ...summarize(r.results.filter((x) => x.ai_version === version)) }));
  const [a, b] = byVersion;
  return {
    latency: all.latency,
    checks: all.checks,
    by_version: byVersion,
    compare: a && b ? { from_version: a.version, to_version: b.version, ...compareSummaries(a, b) } : null,
    baseline: baseline ? { run_id: baseline.id, ...compareSummaries(summarize(baseline.results), all) } : null,
  };
}

/** A run as the API shows it (the shape the console reads); `baseline` is the run named by baseline_run_id (null when none, or gone). */
export function evalRunJson(r: EvalRunRow, baseline: EvalRunRow | null = null): EvalRunJson {
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
    ai_id: r.ai_id ?? EMPTY_UUID,
    versions: r.versions,
    baseline_run_id: r.baseline_run_id ?? EMPTY_UUID,
    ...summariesOf(r, baseline),
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_end: formatLegacy(r.tm_end),
    tm_delete: formatLegacy(r.tm_delete),
  };
}

/** A run the sweep ended failed (failLapsed): what its eval_run_failed says. */
export interface LapsedRun {
  id: string;
  customer_id: string;
  claimed_by: string;
  results: EvalCallResult[];
  error: string;
}

interface RunCreate {
  scenarios: EvalRunScenario[];
  calls: number;
  concurrency: number;
  aiId?: string;
  versions?: number[];
  baselineRunId?: string;
}

export function evalRunsRepo(db: Db) {
  return {
    async create(customerId: string, input: RunCreate): Promise<EvalRunRow> {
      const [row] = await db('eval_runs')
        .insert({
          id: newId(),
          customer_id: customerId,
          status: 'running',
          scenarios: JSON.stringify(input.scenarios),
          calls: input.calls,
          concurrency: input.concurrency,
          ai_id: input.aiId ?? null,
          versions: JSON.stringify(input.versions ?? []),
          baseline_run_id: input.baselineRunId ?? null,
          tm_create: clock.now(),
        })
        .returning('*');
      return row!;
    },
    /** The runs of these ids that are the customer's (the baselines of a page of runs). */
    async many(customerId: string, ids: string[]): Promise<EvalRunRow[]> {
      if (!ids.length) return [];
      return db('eval_runs').where({ customer_id: customerId }).whereNull('tm_delete').whereIn('id', ids);
    },
    async get(customerId: string, id: string): Promise<EvalRunRow | null> {
      return (await db('eval_runs').where({ id, customer_id: customerId }).whereNull('tm_delete').first()) ?? null;
    },
    /**
     * Deletes a run (softly: tm_delete) that is not running, queueing its calls' audio for deletion in the
     * same transaction (eval_audio_deletions). 'running' when it is still running (nothing done); null when
     * there is no such live run of the customer's.
     */
    async remove(customerId: string, id: string): Promise<EvalRunRow | 'running' | null> {
      return db.transaction(async (trx) => {
        const r = await trx('eval_runs').where({ id, customer_id: customerId }).whereNull('tm_delete').forUpdate().first();
        if (!r) return null;
        if (r.status === 'running') return 'running';
        if (!r.tm_audio_removed) await evalAudioRepo(db).queueRuns(trx, [r], 'run deleted');
        const now = clock.now();
        const [row] = await trx('eval_runs').where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
        return row!;
      });
    },
    async list(customerId: string, params: PageParams): Promise<Page<EvalRunRow>> {
      return toPage(await paginate<EvalRunRow>(db('eval_runs').where({ customer_id: customerId }).whereNull('tm_delete').select('*'), params), (r) => r);
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
    /** Renews this worker's lease on the runs it carries; returns the ids it still holds (a swept run is not among them). */
    async renew(ids: string[], worker: string): Promise<string[]> {
      if (!ids.length) return [];
      const rows = (await db('eval_runs').whereIn('id', ids).where({ claimed_by: worker, status: 'running' }).update({ tm_update: clock.now() }).returning('id')) as { id: string }[];
      return rows.map((r) => r.id);
    },
    /**
     * Ends `failed` every claimed run whose lease (tm_update) is older than `leaseMs`: its worker died or
     * hung. Returns what the sweeper publishes for each (eval_run_failed): its customer, results and error.
     */
    async failLapsed(leaseMs: number): Promise<LapsedRun[]> {
      const now = clock.now();
      return (await db('eval_runs')
        .where({ status: 'running' })
        .whereNotNull('claimed_by')
        .where('tm_update', '<', new Date(now.getTime() - leaseMs))
        .update({ status: 'failed', error: `the evals worker carrying it stopped renewing its claim (no renewal for ${leaseMs} ms)`, tm_update: now, tm_end: now })
        .returning(['id', 'customer_id', 'claimed_by', 'results', 'error'])) as LapsedRun[];
    },
    /** The results so far of a run this worker holds; false when it no longer holds it (nothing written). */
    async saveResults(id: string, worker: string, results: EvalCallResult[]): Promise<boolean> {
      const n = await db('eval_runs')
        .where({ id, claimed_by: worker, status: 'running' })
        .update({ results: JSON.stringify(results), tm_update: clock.now() });
      return n > 0;
    },
    /** Ends a run this worker holds; false when it no longer holds it (swept, ended elsewhere: nothing written). */
    async end(id: string, worker: string, status: 'finished' | 'failed', results: EvalCallResult[], error = ''): Promise<boolean> {
      const now = clock.now();
      const n = await db('eval_runs')
        .where({ id, claimed_by: worker, status: 'running' })
        .update({ status, results: JSON.stringify(results), error, tm_update: now, tm_end: now });
      return n > 0;
    },
  };
}
