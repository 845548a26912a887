import type { Knex } from 'knex';

/**
 * Timelines: the SIP Call-IDs of each call's legs (an outbound call's dial attempts each have their
 * own; the timeline sip-analysis and pcap routes read the captured messages by these), and the LLM
 * analyses of ended activeflows (/timeline-analyses, one live record per activeflow).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('call_sip_ids', (t) => {
    t.uuid('call_id').notNullable().references('id').inTable('calls').onDelete('CASCADE');
    t.text('sip_call_id').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable().defaultTo(knex.fn.now());
    t.primary(['call_id', 'sip_call_id']);
  });
  await knex.schema.createTable('timeline_analyses', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('activeflow_id').notNullable();
    t.text('status').notNullable();
    t.jsonb('result').nullable();
    t.text('error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
    t.unique(['customer_id', 'activeflow_id']);
  });
  await knex.raw(`ALTER TABLE timeline_analyses ADD CONSTRAINT timeline_analyses_status_check CHECK (status IN ('progressing', 'completed', 'failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('timeline_analyses');
  await knex.schema.dropTable('call_sip_ids');
}
