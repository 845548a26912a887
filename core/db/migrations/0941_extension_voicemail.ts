import type { Knex } from 'knex';

/**
 * Issue 37 (PBX): an extension's own voicemail destination. A call to the extension goes to its box
 * (flow action `voicemail`) when not answered within `voicemail_timeout` seconds or nothing is
 * registered (`voicemail_on.no_answer`), or when the phone is busy (`voicemail_on.busy`). Off by
 * default: existing extensions keep ringing as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.jsonb('voicemail_on')
      .notNullable()
      .defaultTo(JSON.stringify({ no_answer: false, busy: false }));
    t.integer('voicemail_timeout').notNullable().defaultTo(20);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.dropColumn('voicemail_on');
    t.dropColumn('voicemail_timeout');
  });
}
