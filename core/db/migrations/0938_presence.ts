import type { Knex } from 'knex';

/**
 * blf_keys: the extensions an extension's desk phone shows on its busy lamp keys (docs/pbx.md "Busy
 * lamp and presence"), in key order; the provisioning documents render them per phone family.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE extensions ADD COLUMN blf_keys text[] NOT NULL DEFAULT '{}'::text[]`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => t.dropColumn('blf_keys'));
}
