import type { Knex } from 'knex';

/**
 * Direct hashes of flows (new column) and conferences: POST /flows/{id}/direct-hash-regenerate and
 * /conferences/{id}/direct-hash-regenerate. A set hash names one resource (unique when not empty).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('flows', (t) => {
    t.text('direct_hash').notNullable().defaultTo('');
  });
  await knex.raw(`CREATE UNIQUE INDEX flows_direct_hash_uq ON flows (direct_hash) WHERE direct_hash <> ''`);
  await knex.raw(`CREATE UNIQUE INDEX conferences_direct_hash_uq ON conferences (direct_hash) WHERE direct_hash <> ''`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS conferences_direct_hash_uq');
  await knex.raw('DROP INDEX IF EXISTS flows_direct_hash_uq');
  await knex.schema.alterTable('flows', (t) => {
    t.dropColumn('direct_hash');
  });
}
