import type { Knex } from 'knex';

/**
 * Providers (outbound SIP gateways, platform-wide), trunks (a customer's PBX calling in by source
 * address or digest) and routes (customer + destination prefix -> provider, by priority).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('providers', (t) => {
    t.uuid('id').primary();
    t.text('type').notNullable().defaultTo('sip');
    t.text('hostname').notNullable();
    t.text('tech_prefix').notNullable().defaultTo('');
    t.text('tech_postfix').notNullable().defaultTo('');
    t.jsonb('tech_headers').notNullable().defaultTo('{}');
    t.text('transport').notNullable().defaultTo('udp');
    t.text('auth_username').notNullable().defaultTo('');
    t.text('auth_password').notNullable().defaultTo('');
    t.text('codecs').notNullable().defaultTo('');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.text('health_status').notNullable().defaultTo('unknown');
    t.timestamp('health_checked_at', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['tm_create', 'id']);
  });

  await knex.schema.createTable('trunks', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('domain_name').notNullable();
    t.specificType('auth_types', 'text[]').notNullable();
    t.text('username').notNullable().defaultTo('');
    t.text('password').notNullable().defaultTo('');
    // IPs and CIDRs as written; lookups cast to cidr.
    t.specificType('allowed_ips', 'text[]').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX trunks_domain_live_uq ON trunks (domain_name) WHERE tm_delete IS NULL`);

  await knex.schema.createTable('routes', (t) => {
    t.uuid('id').primary();
    // The empty UUID: a default route for every customer.
    t.uuid('customer_id').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.uuid('provider_id').notNullable().references('id').inTable('providers').onDelete('CASCADE');
    t.integer('priority').notNullable().defaultTo(0);
    t.text('target').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.timestamp('tm_delete', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('routes');
  await knex.schema.dropTable('trunks');
  await knex.schema.dropTable('providers');
}
