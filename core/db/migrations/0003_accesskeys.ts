import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accesskeys', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    // sha256 hex of the secret; the secret itself is never stored.
    t.text('token_hash').notNullable().unique();
    t.text('token_prefix').notNullable();
    t.timestamp('tm_expire', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('accesskeys');
}
