import type { Knex } from 'knex';

/**
 * Customer registration domains (`{label}.reg.{SIP_DOMAIN}`, one short label per customer), SIP
 * extensions, and desk-phone provisioning tokens.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customer_domains', (t) => {
    t.uuid('customer_id').primary().references('id').inTable('customers').onDelete('CASCADE');
    t.text('label').notNullable().unique();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
  });

  await knex.schema.createTable('extensions', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('extension').notNullable();
    t.text('domain_name').notNullable();
    t.text('username').notNullable();
    // Digest authentication (MD5 and SHA-256) needs the password or per-algorithm HA1s; the
    // provisioning URL serves it in clear, so it is stored as given.
    t.text('password').notNullable();
    t.text('direct_hash').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX extensions_customer_extension_live_uq ON extensions (customer_id, extension) WHERE tm_delete IS NULL`);
  await knex.raw(`CREATE UNIQUE INDEX extensions_domain_username_live_uq ON extensions (domain_name, username) WHERE tm_delete IS NULL`);
  await knex.raw(`CREATE UNIQUE INDEX extensions_direct_hash_uq ON extensions (direct_hash)`);

  await knex.schema.createTable('provisioning_tokens', (t) => {
    // sha256 hex of the token: a database dump does not hand out SIP passwords.
    t.text('token_hash').primary();
    t.uuid('extension_id').notNullable().references('id').inTable('extensions').onDelete('CASCADE');
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.timestamp('tm_expire', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['tm_expire']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('provisioning_tokens');
  await knex.schema.dropTable('extensions');
  await knex.schema.dropTable('customer_domains');
}
