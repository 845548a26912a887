import type { Knex } from 'knex';

/**
 * Issue 35 (turn-taking you can measure): an aimessage's metadata; an assistant message of a voice
 * session carries its turn's latency breakdown there (`metadata.latency`, docs/ai.md "Turn-taking").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('aimessages', (t) => {
    t.jsonb('metadata').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('aimessages', (t) => {
    t.dropColumn('metadata');
  });
}
