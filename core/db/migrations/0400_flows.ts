import type { Knex } from 'knex';

/**
 * Flows (customer-programmed action lists) and activeflows (one run of a flow). A flow created
 * implicitly by POST /calls with inline actions has persist = false: it exists so the call has a
 * flow_id, but it is not listed.
 */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('flows', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('type').notNullable().defaultTo('flow');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.jsonb('actions').notNullable().defaultTo('[]');
    t.uuid('on_complete_flow_id').notNullable();
    t.boolean('persist').notNullable().defaultTo(true);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });

  await knex.schema.createTable('activeflows', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('flow_id').notNullable();
    t.text('status').notNullable().defaultTo('');
    t.text('reference_type').notNullable().defaultTo('');
    t.uuid('reference_id').notNullable();
    t.uuid('reference_activeflow_id').notNullable();
    t.uuid('on_complete_flow_id').notNullable();
    t.text('webhook_uri').notNullable().defaultTo('');
    t.text('webhook_method').notNullable().defaultTo('');
    t.jsonb('current_action').nullable();
    t.text('forward_action_id').notNullable().defaultTo('');
    t.jsonb('executed_actions').notNullable().defaultTo('[]');
    t.jsonb('variables').notNullable().defaultTo('{}');
    t.integer('complete_count').notNullable().defaultTo(0);
    t.text('end_reason').notNullable().defaultTo('');
    t.text('error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE activeflows ADD CONSTRAINT activeflows_status_check CHECK (status IN ('','running','ended'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('activeflows');
  await knex.schema.dropTable('flows');
}
