import type { Knex } from 'knex';

/**
 * Issue 37 part C (park, pickup, feature codes; core/pbx/): an extension's pickup groups (group
 * pickup `*8` answers a call ringing any extension sharing one of the caller's groups), and the
 * customer's PBX settings (its feature codes, the park lot and its slots, the park timeout and what
 * follows it). A customer without a settings row has the defaults of core/pbx/feature-codes.ts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE extensions ADD COLUMN pickup_groups text[] NOT NULL DEFAULT '{}'`);
  await knex.schema.createTable('pbx_settings', (t) => {
    t.uuid('customer_id').primary();
    t.jsonb('feature_codes').notNullable();
    t.timestamp('tm_create', { useTz: true }).notNullable();
    t.timestamp('tm_update', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('pbx_settings');
  await knex.schema.alterTable('extensions', (t) => {
    t.dropColumn('pickup_groups');
  });
}
