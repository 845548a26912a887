import type { Knex } from 'knex';

/** AI audits: an LLM's evaluation of one AI participant of a finished AI call (core/ai/audit.ts). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('aiaudits', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('aicall_id').notNullable().references('id').inTable('aicalls').onDelete('CASCADE');
    t.uuid('ai_id').notNullable();
    t.uuid('prompt_history_id').nullable();
    t.text('status').notNullable();
    t.integer('overall_score').nullable();
    t.jsonb('evaluation').nullable();
    t.jsonb('message_ids').nullable();
    t.text('language').notNullable().defaultTo('en-US');
    t.text('error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE aiaudits ADD CONSTRAINT aiaudits_status_check CHECK (status IN ('progressing', 'completed', 'failed'))`);
  await knex.raw(`ALTER TABLE aiaudits ADD CONSTRAINT aiaudits_overall_score_check CHECK (overall_score IS NULL OR overall_score BETWEEN 1 AND 5)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('aiaudits');
}
