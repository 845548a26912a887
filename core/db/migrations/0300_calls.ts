import type { Knex } from 'knex';

/** Calls and their recordings: the records media-app writes on every state change. */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('calls', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('owner_id').notNullable();
    t.text('owner_type').notNullable().defaultTo('');
    t.uuid('flow_id').notNullable();
    t.uuid('activeflow_id').notNullable();
    t.text('type').notNullable().defaultTo('flow');
    t.uuid('master_call_id').notNullable();
    t.specificType('chained_call_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.uuid('recording_id').notNullable();
    t.specificType('recording_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.uuid('groupcall_id').notNullable();
    t.jsonb('source').notNullable();
    t.jsonb('destination').notNullable();
    t.text('status').notNullable();
    t.text('direction').notNullable();
    t.text('mute_direction').notNullable().defaultTo('');
    t.text('hangup_by').notNullable().defaultTo('');
    t.text('hangup_reason').notNullable().defaultTo('');
    t.jsonb('data').notNullable().defaultTo('{}');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    // The SIP Call-ID of the leg and the media-app node that owns it (commands go to that node's queue).
    t.text('sip_call_id').notNullable().defaultTo('');
    t.text('node_id').notNullable().defaultTo('');
    tm(t, 'tm_ringing');
    tm(t, 'tm_progressing');
    tm(t, 'tm_hangup');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['sip_call_id']);
  });
  await knex.raw(`ALTER TABLE calls ADD CONSTRAINT calls_status_check CHECK (status IN ('dialing','ringing','progressing','terminating','canceling','hangup'))`);
  await knex.raw(`ALTER TABLE calls ADD CONSTRAINT calls_direction_check CHECK (direction IN ('incoming','outgoing'))`);

  await knex.schema.createTable('recordings', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('owner_id').notNullable();
    t.text('owner_type').notNullable().defaultTo('');
    t.uuid('activeflow_id').notNullable();
    t.text('reference_type').notNullable();
    t.uuid('reference_id').notNullable();
    t.text('status').notNullable();
    t.text('format').notNullable().defaultTo('wav');
    t.uuid('on_end_flow_id').notNullable();
    t.jsonb('options').notNullable().defaultTo('{}');
    t.specificType('filenames', 'text[]').notNullable().defaultTo('{}');
    tm(t, 'tm_start');
    tm(t, 'tm_end');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE recordings ADD CONSTRAINT recordings_status_check CHECK (status IN ('initiating','recording','stopping','ended'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('recordings');
  await knex.schema.dropTable('calls');
}
