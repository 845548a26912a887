/**
 * eval_audio_deletions: the object keys of eval call audio still to delete from the files store (issue 56,
 * docs/evals.md "Both tracks of a call"). A run's keys are queued in the same transaction that deletes the
 * run, erases its account, or ends its retention (stripping `audio` from its results), so no key is
 * forgotten between the row and the store; core/evals/audio-removal.ts deletes them and keeps the ones the
 * store refused (attempts, last_error) for its next sweep.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { evalAudioKeysOf } from '../evals/audio';
import type { EvalAudioDeletionRow, EvalRunRow } from '../db/rows/evals';

type Handle = Db | Knex.Transaction;

/** Queues the audio keys of these runs (of `reason`) and marks the runs' audio removed; the caller's transaction. */
async function queueRuns(db: Handle, runs: EvalRunRow[], reason: string): Promise<number> {
  const now = clock.now();
  const rows = runs.flatMap((r) => evalAudioKeysOf(r).map((key) => ({ id: newId(), key, run_id: r.id, reason, tm_create: now })));
  for (let i = 0; i < rows.length; i += 500) await db('eval_audio_deletions').insert(rows.slice(i, i + 500));
  if (runs.length)
    await db('eval_runs')
      .whereIn(
        'id',
        runs.map((r) => r.id),
      )
      .update({ tm_audio_removed: now });
  return rows.length;
}

export function evalAudioRepo(db: Db) {
  return {
    /** Every run of the customer's whose audio is still kept, queued (account erasure: in its transaction, before the rows go). */
    async queueCustomer(trx: Handle, customerId: string): Promise<number> {
      const runs = await trx('eval_runs').where({ customer_id: customerId }).whereNull('tm_audio_removed').forUpdate();
      return queueRuns(trx, runs, 'account deleted');
    },
    /**
     * Ends the audio of up to `limit` ended runs that ended before `before` (EVALS_AUDIO_RETENTION_DAYS):
     * their keys queued, each result's `audio` replaced by an `audio_error` saying why. Returns the runs.
     */
    async expire(before: Date, days: number, limit = 100): Promise<string[]> {
      return db.transaction(async (trx) => {
        const runs = await trx('eval_runs')
          .whereNot({ status: 'running' })
          .whereNull('tm_audio_removed')
          .whereNull('tm_delete')
          .where('tm_end', '<', before)
          .orderBy('tm_end')
          .limit(limit)
          .forUpdate()
          .skipLocked();
        const note = `removed: kept ${days} days after the run ended (EVALS_AUDIO_RETENTION_DAYS)`;
        for (const r of runs) {
          const results = r.results.map(({ audio, ...rest }) => (audio ? { ...rest, audio_error: note } : rest));
          await trx('eval_runs')
            .where({ id: r.id })
            .update({ results: JSON.stringify(results) });
        }
        await queueRuns(trx, runs, 'retention');
        return runs.map((r) => r.id);
      });
    },
    /** Queued keys (of one run when given), the fewest attempts first, then the oldest: keys the store keeps refusing never hold back newer ones. */
    async pending(limit: number, runId?: string): Promise<EvalAudioDeletionRow[]> {
      const q = db('eval_audio_deletions').orderBy('attempts').orderBy('tm_create').orderBy('id').limit(limit);
      if (runId) q.where({ run_id: runId });
      return q;
    },
    async done(id: string): Promise<void> {
      await db('eval_audio_deletions').where({ id }).delete();
    },
    async failed(id: string, error: string): Promise<void> {
      await db('eval_audio_deletions')
        .where({ id })
        .update({ attempts: db.raw('attempts + 1'), last_error: error.slice(0, 500), tm_update: clock.now() });
    },
    queueRuns: (trx: Handle, runs: EvalRunRow[], reason: string) => queueRuns(trx, runs, reason),
  };
}
