import type { Knex } from 'knex';

/**
 * providercalls (POST /providercalls): an operator's call forced through one provider, the request
 * as given and the ids of the calls and groupcalls it made. Soft-deleted; the calls stay.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('providercalls', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('provider_id').notNullable();
    t.uuid('flow_id').notNullable();
    t.jsonb('source').notNullable();
    t.jsonb('destinations').notNullable();
    t.text('anonymous').notNullable().defaultTo('auto');
    t.specificType('call_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.specificType('groupcall_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['tm_create', 'id']);
    t.index(['provider_id', 'tm_create']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('providercalls');
}
