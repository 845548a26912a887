import type { Knex } from 'knex';

/**
 * Per-extension digest challenge order (core/extensions/digest-algorithms.ts): null = the platform
 * default SIP_DIGEST_ALGORITHMS; else 1-2 distinct values of MD5 and SHA-256, most preferred first.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.specificType('digest_algorithms', 'text[]').nullable();
  });
  await knex.raw(
    `ALTER TABLE extensions ADD CONSTRAINT extensions_digest_algorithms_check CHECK (digest_algorithms IS NULL OR (
      cardinality(digest_algorithms) BETWEEN 1 AND 2 AND digest_algorithms <@ ARRAY['MD5','SHA-256']::text[]
      AND (cardinality(digest_algorithms) = 1 OR digest_algorithms[1] <> digest_algorithms[2])))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('extensions', (t) => {
    t.dropColumn('digest_algorithms');
  });
}
