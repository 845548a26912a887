import type { Knex } from 'knex';

/** Contacts with their addresses and tags; tags are shared with agents and queues. */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('tags', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('detail').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX tags_name_live_uq ON tags (customer_id, lower(name)) WHERE tm_delete IS NULL`);

  await knex.schema.createTable('contacts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('first_name').notNullable().defaultTo('');
    t.text('last_name').notNullable().defaultTo('');
    t.text('display_name').notNullable().defaultTo('');
    t.text('company').notNullable().defaultTo('');
    t.text('job_title').notNullable().defaultTo('');
    t.text('source').notNullable().defaultTo('manual');
    t.text('external_id').notNullable().defaultTo('');
    t.text('notes').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });

  await knex.schema.createTable('contact_addresses', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('contact_id').notNullable().references('id').inTable('contacts').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('target').notNullable();
    t.text('target_name').notNullable().defaultTo('');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.boolean('is_primary').notNullable().defaultTo(false);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['contact_id']);
  });
  await knex.raw(`ALTER TABLE contact_addresses ADD CONSTRAINT contact_addresses_type_check CHECK (type IN ('tel','email'))`);
  // Lookup: exact E.164 for tel, case-insensitive for email.
  await knex.raw(`CREATE INDEX contact_addresses_lookup ON contact_addresses (customer_id, type, lower(target))`);

  await knex.schema.createTable('contact_tags', (t) => {
    t.uuid('contact_id').notNullable().references('id').inTable('contacts').onDelete('CASCADE');
    t.uuid('tag_id').notNullable().references('id').inTable('tags').onDelete('CASCADE');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.primary(['contact_id', 'tag_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_tags');
  await knex.schema.dropTable('contact_addresses');
  await knex.schema.dropTable('contacts');
  await knex.schema.dropTable('tags');
}
