import type { Knex } from 'knex';

/**
 * Issue 56: the agent's side of a ConversationRelay call. The relay (media-app/twiml/relay.ts) writes one
 * row per reply of the app (its `text` tokens joined, the welcome greeting too): `seq` in the call's order,
 * `t_ms` from the call's answer (calls.tm_progressing) to the reply's first token, `interrupted` when the
 * caller cut it. At most a bounded number per call (core/repos/relay-lines.ts); the rows go with their call
 * and with their customer (no call is hard-deleted today but one undone as it was dialled).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('relay_lines', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('call_id').notNullable().references('id').inTable('calls').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('text').notNullable();
    t.integer('t_ms').notNullable();
    t.boolean('interrupted').notNullable().defaultTo(false);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.unique(['call_id', 'seq']);
    t.index(['customer_id', 'call_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('relay_lines');
}
