import type { Knex } from 'knex';

/**
 * Issue 37 (PBX): the optional AI summary of a voicemail message. A box opts in with `ai_summary`
 * (off by default: existing boxes send nothing to an LLM); once a message's transcript is stored,
 * the platform's LLM writes `summary` on it, or `summary_error` says why there is none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('voicemail_boxes', (t) => {
    t.boolean('ai_summary').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('voicemail_messages', (t) => {
    t.text('summary').notNullable().defaultTo('');
    t.text('summary_error').notNullable().defaultTo('');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('voicemail_messages', (t) => {
    t.dropColumn('summary');
    t.dropColumn('summary_error');
  });
  await knex.schema.alterTable('voicemail_boxes', (t) => {
    t.dropColumn('ai_summary');
  });
}
