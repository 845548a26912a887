import type { Knex } from 'knex';

/**
 * Speech on live calls: speaking sessions (streaming TTS), transcribe sessions (live or of a
 * recording) and their transcript segments. media-app writes status changes and segments;
 * control-api creates the rows and reads them.
 */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('speakings', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('reference_type').notNullable();
    t.uuid('reference_id').notNullable();
    t.text('language').notNullable().defaultTo('en-US');
    t.text('provider').notNullable().defaultTo('provider_a');
    t.text('voice_id').notNullable().defaultTo('');
    t.text('direction').notNullable().defaultTo('both');
    t.text('status').notNullable();
    // Each say takes the next number, so the owner node speaks texts in the order the API took them.
    t.integer('say_count').notNullable().defaultTo(0);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.schema.createTable('transcribes', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('activeflow_id').notNullable();
    t.uuid('on_end_flow_id').notNullable();
    t.text('reference_type').notNullable();
    t.uuid('reference_id').notNullable();
    t.text('status').notNullable();
    t.text('language').notNullable().defaultTo('en-US');
    t.text('direction').notNullable().defaultTo('both');
    t.text('provider').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.schema.createTable('transcripts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('transcribe_id').notNullable().references('id').inTable('transcribes').onDelete('CASCADE');
    t.text('direction').notNullable();
    t.text('message').notNullable();
    t.integer('offset_ms').notNullable().defaultTo(0);
    t.float('confidence').nullable();
    t.timestamp('tm_transcript', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['transcribe_id', 'tm_create', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('transcripts');
  await knex.schema.dropTable('transcribes');
  await knex.schema.dropTable('speakings');
}
