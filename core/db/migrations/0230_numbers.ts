import type { Knex } from 'knex';

/** Phone numbers: virtual (+899…, free) and normal (from the local inventory, charged, renewed). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('numbers', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('number').notNullable();
    t.text('type').notNullable();
    // The provider that delivers this number's calls (empty UUID for virtual numbers).
    t.uuid('provider_id').notNullable();
    t.uuid('call_flow_id').notNullable();
    t.uuid('message_flow_id').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('status').notNullable().defaultTo('active');
    t.boolean('t38_enabled').notNullable().defaultTo(false);
    t.boolean('emergency_enabled').notNullable().defaultTo(false);
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('tm_purchase', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_renew', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE numbers ADD CONSTRAINT numbers_type_check CHECK (type IN ('normal','virtual'))`);
  await knex.raw(`ALTER TABLE numbers ADD CONSTRAINT numbers_status_check CHECK (status IN ('active','deleted'))`);
  // One live owner per number: a concurrent second purchase fails on this index.
  await knex.raw(`CREATE UNIQUE INDEX numbers_number_live_uq ON numbers (number) WHERE tm_delete IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('numbers');
}
