import type { Knex } from 'knex';

/**
 * Groupcalls (several destinations rung together or in turn, the first answer wins) and transfers
 * (blind or attended, from the API or a phone's REFER). media-app writes both; control-api reads.
 */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('groupcalls', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('owner_id').notNullable();
    t.text('owner_type').notNullable().defaultTo('');
    t.text('status').notNullable();
    t.uuid('flow_id').notNullable();
    t.jsonb('source').notNullable();
    t.jsonb('destinations').notNullable();
    t.uuid('master_call_id').notNullable();
    t.uuid('master_groupcall_id').notNullable();
    t.text('ring_method').notNullable();
    t.text('answer_method').notNullable();
    t.uuid('answer_call_id').notNullable();
    t.specificType('call_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.uuid('answer_groupcall_id').notNullable();
    t.specificType('groupcall_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.integer('call_count').notNullable().defaultTo(0);
    t.integer('groupcall_count').notNullable().defaultTo(0);
    t.integer('dial_index').notNullable().defaultTo(0);
    t.jsonb('data').notNullable().defaultTo('{}');
    t.text('node_id').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE groupcalls ADD CONSTRAINT groupcalls_status_check CHECK (status IN ('progressing','hangingup','hangup'))`);

  await knex.schema.createTable('transfers', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('type').notNullable();
    t.uuid('transferer_call_id').notNullable();
    t.jsonb('transferee_addresses').notNullable();
    t.uuid('transferee_call_id').notNullable();
    t.uuid('groupcall_id').notNullable();
    t.uuid('confbridge_id').notNullable();
    // not in the spec's field list: where the transfer is (initiating, consulting, done, failed) and why
    t.text('status').notNullable().defaultTo('initiating');
    t.text('source').notNullable().defaultTo('api');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE transfers ADD CONSTRAINT transfers_type_check CHECK (type IN ('attended','blind'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('transfers');
  await knex.schema.dropTableIfExists('groupcalls');
}
