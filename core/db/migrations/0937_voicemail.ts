import type { Knex } from 'knex';

/**
 * Issue 37 (PBX) voicemail: boxes (per extension or free-standing) with a hashed PIN, greetings and
 * options, and their messages (a recording's WAV with caller, time, duration and transcript). Lists
 * run newest first per box and folder: the partial indexes keep 10,000 messages of a box under the
 * 200 ms budget (scripts/bench/pbx/voicemail-list.ts). Extensions get `mwi_unsolicited`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('voicemail_boxes', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    // The extension the box belongs to; null for a free-standing box (numbers, flows).
    t.uuid('extension_id').nullable().references('id').inTable('extensions').onDelete('SET NULL');
    // The box number a caller keys in at voicemail_main (digits, unique per customer).
    t.text('number').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    // scrypt, as agents' passwords (core/password.ts); never returned.
    t.text('pin_hash').notNullable();
    // Greeting WAVs in the recordings store ('' = none: the TTS default is spoken).
    t.text('greeting_unavailable').notNullable().defaultTo('');
    t.text('greeting_busy').notNullable().defaultTo('');
    t.text('greeting_name').notNullable().defaultTo('');
    t.text('greeting_text').notNullable().defaultTo('');
    t.text('language').notNullable().defaultTo('en-US');
    t.integer('max_message_sec').notNullable().defaultTo(180);
    t.integer('max_messages').notNullable().defaultTo(100);
    t.text('email').notNullable().defaultTo('');
    t.boolean('attach_audio').notNullable().defaultTo(true);
    t.boolean('delete_after_email').notNullable().defaultTo(false);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX voicemail_boxes_number_live_uq ON voicemail_boxes (customer_id, number) WHERE tm_delete IS NULL`);
  await knex.raw(`CREATE UNIQUE INDEX voicemail_boxes_extension_live_uq ON voicemail_boxes (extension_id) WHERE tm_delete IS NULL AND extension_id IS NOT NULL`);

  await knex.schema.createTable('voicemail_messages', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('box_id').notNullable().references('id').inTable('voicemail_boxes').onDelete('CASCADE');
    t.text('folder').notNullable().defaultTo('new');
    t.boolean('urgent').notNullable().defaultTo(false);
    // the caller's address (type and target, as the call's source gave it): what callback dials
    t.text('caller_type').notNullable().defaultTo('');
    t.text('caller_number').notNullable().defaultTo('');
    t.text('caller_name').notNullable().defaultTo('');
    t.uuid('call_id').nullable();
    t.uuid('recording_id').nullable();
    // The WAV in the recordings store.
    t.text('filename').notNullable();
    t.integer('duration_ms').notNullable().defaultTo(0);
    t.text('transcript').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
  });
  await knex.raw(`CREATE INDEX voicemail_messages_box_live_idx ON voicemail_messages (box_id, tm_create DESC, id DESC) WHERE tm_delete IS NULL`);
  await knex.raw(`CREATE INDEX voicemail_messages_box_folder_live_idx ON voicemail_messages (box_id, folder, tm_create DESC, id DESC) WHERE tm_delete IS NULL`);

  await knex.schema.alterTable('extensions', (t) => {
    // unsolicited message-summary NOTIFYs to the extension's registered contacts (RFC 3842)
    t.boolean('mwi_unsolicited').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.dropColumn('mwi_unsolicited');
  });
  await knex.schema.dropTable('voicemail_messages');
  await knex.schema.dropTable('voicemail_boxes');
}
