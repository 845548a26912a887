import type { Knex } from 'knex';

/**
 * Desk phones provisioned by directory fetch (issue #32 items 7-9): an extension may be bound to the
 * MAC address of its desk phone (12 lowercase hex digits, unique among a customer's live extensions),
 * and a customer may have one provisioning secret for a DHCP option 66 URL
 * `/provisioning/customer/{secret}/` in which the MAC of a requested file selects the extension.
 * Only the sha256 of the secret is stored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.text('mac').nullable();
  });
  await knex.raw(`CREATE UNIQUE INDEX extensions_customer_mac_live_uq ON extensions (customer_id, mac) WHERE tm_delete IS NULL AND mac IS NOT NULL`);
  await knex.schema.createTable('provisioning_customer_secrets', (t) => {
    t.uuid('customer_id').primary().references('id').inTable('customers').onDelete('CASCADE');
    t.text('secret_hash').notNullable().unique();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('provisioning_customer_secrets');
  await knex.raw('DROP INDEX IF EXISTS extensions_customer_mac_live_uq');
  await knex.schema.alterTable('extensions', (t) => {
    t.dropColumn('mac');
  });
}
