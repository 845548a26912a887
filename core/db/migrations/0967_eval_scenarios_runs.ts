import type { Knex } from 'knex';

/**
 * Issue 56: voice agent evals. `eval_scenarios` are a customer's scenarios (target, caller, checks as
 * jsonb in the shape of core/evals/schema.ts); `eval_runs` a run of some of them, with a copy of the
 * scenarios as they were when it started, its results (one per call) and the worker that claimed it
 * (evals/worker.ts: null until a worker takes it).
 */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('eval_scenarios', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable();
    t.jsonb('target').notNullable();
    t.jsonb('caller').notNullable();
    t.jsonb('checks').notNullable().defaultTo('[]');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.schema.createTable('eval_runs', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('status').notNullable();
    t.jsonb('scenarios').notNullable();
    t.integer('calls').notNullable();
    t.integer('concurrency').notNullable();
    t.jsonb('results').notNullable().defaultTo('[]');
    t.text('error').notNullable().defaultTo('');
    t.text('claimed_by').nullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_end');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE INDEX eval_runs_unclaimed ON eval_runs (tm_create) WHERE claimed_by IS NULL AND status = 'running'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('eval_runs');
  await knex.schema.dropTable('eval_scenarios');
}
