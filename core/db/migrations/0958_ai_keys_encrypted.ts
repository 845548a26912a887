import type { Knex } from 'knex';
import { isSealed, openKey, sealKey } from '../../secrets/keys';
import { convertStoredKeys } from '../../secrets/stored-keys';

/**
 * Issue 35: the AI vendor keys sealed at rest (core/secrets/keys.ts, docs/ai.md "Keys"). Seals the
 * keys already stored: ais.engine_key and the keys in ais.parameter and aicalls.parameter (a copy of
 * the AI's). A value already in the `enc:v1:` envelope is left alone, so running it twice changes
 * nothing. The key comes from the platform secret (useKeySecret: control-api's start and
 * core/db/migrate-cli.ts set it before migrating); with rows to convert and no secret it stops.
 */
/** The tables holding keys when this migration was written (later tables are sealed from the start). */
const TABLES = ['ais', 'aicalls'] as const;

export async function up(knex: Knex): Promise<void> {
  await convertStoredKeys(
    knex,
    (v) => sealKey(v),
    (v) => !isSealed(v),
    () => true,
    TABLES,
  );
}

export async function down(knex: Knex): Promise<void> {
  await convertStoredKeys(
    knex,
    (v) => openKey(v),
    isSealed,
    () => true,
    TABLES,
  );
}
