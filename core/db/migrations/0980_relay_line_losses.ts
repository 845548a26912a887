import type { Knex } from 'knex';

/**
 * Issue 56 (docs/evals.md "Agent kinds"): what of a ConversationRelay app's replies on a call was NOT kept
 * in relay_lines, one row a call: `replies_lost` (replies not written: past RELAY_LINES_MAX, or their
 * write failed) and `chars_lost` (their characters, and those cut off a reply past RELAY_LINE_MAX_CHARS).
 * A call with a row here has an incomplete agent transcript: the evals worker fails
 * transcript_not_contains on it instead of passing it on words it never saw. Gone with the call and
 * with its customer.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('relay_line_losses', (t) => {
    t.uuid('call_id').primary().references('id').inTable('calls').onDelete('CASCADE');
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.integer('replies_lost').notNullable().defaultTo(0);
    t.integer('chars_lost').notNullable().defaultTo(0);
    t.timestamp('tm_update', { useTz: true, precision: 6 }).notNullable();
    t.index(['customer_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('relay_line_losses');
}
