import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('username').notNullable();
    t.text('password_hash').notNullable().defaultTo('');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('ring_method').notNullable().defaultTo('ringall');
    t.text('status').notNullable().defaultTo('offline');
    // VoIPbin's permission bitmask (core/permissions.ts).
    t.bigInteger('permission').notNullable().defaultTo(0);
    t.jsonb('tag_ids').notNullable().defaultTo('[]');
    t.jsonb('addresses').notNullable().defaultTo('[]');
    t.text('direct_hash').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX agents_username_live_uq ON agents (lower(username)) WHERE tm_delete IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agents');
}
