import type { Knex } from 'knex';

/** Storage accounts (one per customer, with a quota) and the files they hold. */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('storage_accounts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().unique().references('id').inTable('customers').onDelete('CASCADE');
    t.bigInteger('quota_bytes').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
  });
  await knex.schema.createTable('storage_files', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('id').inTable('storage_accounts').onDelete('CASCADE');
    t.uuid('owner_id').notNullable();
    t.text('owner_type').notNullable().defaultTo('');
    t.text('reference_type').notNullable().defaultTo('normal');
    t.uuid('reference_id').notNullable();
    t.text('type').notNullable().defaultTo('');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('filename').notNullable();
    t.text('content_type').notNullable().defaultTo('application/octet-stream');
    // Object key in the storage backend (local disk or S3-compatible bucket).
    t.text('object_key').notNullable();
    t.bigInteger('filesize').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('storage_files');
  await knex.schema.dropTable('storage_accounts');
}
