/**
 * A run row claimed by `worker` as the worker's claim does, but this run by its id: `claim()` takes the
 * oldest unclaimed running run of the database, which in a process that ran other evals suites before
 * may be another file's (a run its worker left running). Tests that write a run's results as a worker
 * would claim theirs with this.
 */
import type { Knex } from '../../core/db/knex';

export async function claimRun(db: Knex, runId: string, worker: string): Promise<void> {
  const n = await db('eval_runs').where({ id: runId, status: 'running' }).whereNull('claimed_by').update({ claimed_by: worker, tm_update: new Date() });
  if (n !== 1) throw new Error(`run ${runId} was not running unclaimed`);
}
