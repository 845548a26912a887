import type { Knex } from 'knex';

/**
 * Outbound registration (media-app/outreg): a provider or a trunk may register to a carrier's
 * registrar. One row per owner holds the settings and the live state the API shows read-only.
 * `contact_user` is the unguessable user of the Contact we register; an INVITE to it is that owner's.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbound_registrations', (t) => {
    t.uuid('id').primary();
    t.string('owner_type', 16).notNullable();
    t.uuid('owner_id').notNullable();
    t.uuid('customer_id').nullable();
    t.string('registrar', 300).notNullable();
    t.string('domain', 255).notNullable().defaultTo('');
    t.string('username', 128).notNullable();
    t.string('password', 128).notNullable().defaultTo('');
    t.integer('expires').notNullable().defaultTo(3600);
    t.string('transport', 8).notNullable().defaultTo('udp');
    t.string('contact_user', 64).notNullable().unique();
    t.string('state', 16).notNullable().defaultTo('unregistered');
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.string('last_error', 200).notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true }).notNullable();
    t.timestamp('tm_update', { useTz: true }).nullable();
  });
  await knex.raw(`ALTER TABLE outbound_registrations ADD CONSTRAINT outbound_registrations_owner_type_check CHECK (owner_type IN ('provider', 'trunk'))`);
  await knex.raw(`ALTER TABLE outbound_registrations ADD CONSTRAINT outbound_registrations_state_check CHECK (state IN ('unregistered', 'registering', 'registered', 'failed'))`);
  await knex.raw(`CREATE UNIQUE INDEX outbound_registrations_owner_uq ON outbound_registrations (owner_type, owner_id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outbound_registrations');
}
