import type { Knex } from 'knex';

/**
 * Issue 56, an eval run's call audio removed with its run (docs/evals.md "Both tracks of a call"):
 * `eval_runs.tm_delete` (a run is deleted softly, as every resource), `tm_audio_removed` (its tracks
 * were handed to `eval_audio_deletions`: at its deletion or when EVALS_AUDIO_RETENTION_DAYS passed).
 * `eval_audio_deletions` holds the object keys still to delete from the files store: a delete the store
 * refuses stays queued (attempts, last_error) for the next sweep. It has no customer_id on purpose: an
 * account's deletion queues its runs' keys here, then erases every row that has one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('eval_runs', (t) => {
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_audio_removed', { useTz: true, precision: 6 }).nullable();
  });
  await knex.raw(`CREATE INDEX eval_runs_audio_kept ON eval_runs (tm_end) WHERE tm_audio_removed IS NULL AND status <> 'running'`);
  await knex.schema.createTable('eval_audio_deletions', (t) => {
    t.uuid('id').primary();
    t.text('key').notNullable();
    /** the run whose audio it was (no foreign key: the run may be erased with its account) */
    t.uuid('run_id').notNullable();
    t.text('reason').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.index(['run_id']);
    t.index(['tm_create']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('eval_audio_deletions');
  await knex.raw('DROP INDEX eval_runs_audio_kept');
  await knex.schema.alterTable('eval_runs', (t) => {
    t.dropColumn('tm_delete');
    t.dropColumn('tm_audio_removed');
  });
}
