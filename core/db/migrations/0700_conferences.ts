import type { Knex } from 'knex';

/**
 * Conferences (rooms and two-party connects) and their participants (conferencecalls). A conference
 * is hosted by one media-app node (Redis key conference-node:<id>); node_id keeps the last host for
 * the record.
 */
const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('conferences', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('status').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.jsonb('data').notNullable().defaultTo('{}');
    t.integer('timeout').notNullable().defaultTo(0);
    t.uuid('pre_flow_id').notNullable();
    t.uuid('post_flow_id').notNullable();
    t.specificType('conferencecall_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.uuid('recording_id').notNullable();
    t.specificType('recording_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.uuid('transcribe_id').notNullable();
    t.specificType('transcribe_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.text('direct_hash').notNullable().defaultTo('');
    t.text('node_id').notNullable().defaultTo('');
    tm(t, 'tm_end');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE conferences ADD CONSTRAINT conferences_type_check CHECK (type IN ('conference','connect','queue'))`);
  await knex.raw(`ALTER TABLE conferences ADD CONSTRAINT conferences_status_check CHECK (status IN ('starting','progressing','terminating','terminated'))`);

  await knex.schema.createTable('conferencecalls', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('activeflow_id').notNullable();
    t.uuid('conference_id').notNullable().references('id').inTable('conferences').onDelete('CASCADE');
    t.text('reference_type').notNullable().defaultTo('call');
    t.uuid('reference_id').notNullable();
    t.text('status').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['conference_id']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE conferencecalls ADD CONSTRAINT conferencecalls_status_check CHECK (status IN ('joining','joined','leaving','leaved'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('conferencecalls');
  await knex.schema.dropTable('conferences');
}
