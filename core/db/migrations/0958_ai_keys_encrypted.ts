import type { Knex } from 'knex';
import { isSealed, mapParameterKeys, openKey, sealKey } from '../../secrets/keys';

/**
 * Issue 35: the AI vendor keys sealed at rest (core/secrets/keys.ts, docs/ai.md "Keys"). Seals the
 * keys already stored: ais.engine_key and the keys in ais.parameter and aicalls.parameter (a copy of
 * the AI's). A value already in the `enc:v1:` envelope is left alone, so running it twice changes
 * nothing. The key comes from the platform secret (useKeySecret: control-api's start and
 * core/db/migrate-cli.ts set it before migrating); with rows to convert and no secret it stops.
 */
type Row = { id: string; engine_key?: string; parameter: Record<string, unknown> | string | null };

const param = (p: Row['parameter']): Record<string, unknown> => (typeof p === 'string' ? (JSON.parse(p) as Record<string, unknown>) : (p ?? {}));

async function convert(knex: Knex, f: (v: string) => string, wanted: (v: string) => boolean): Promise<void> {
  for (const table of ['ais', 'aicalls'] as const) {
    const cols = table === 'ais' ? ['id', 'engine_key', 'parameter'] : ['id', 'parameter'];
    const rows = (await knex(table).select(cols)) as Row[];
    for (const r of rows) {
      const patch: Record<string, unknown> = {};
      if (typeof r.engine_key === 'string' && r.engine_key && wanted(r.engine_key)) patch.engine_key = f(r.engine_key);
      let changed = false;
      const p = mapParameterKeys(param(r.parameter), (v) => {
        if (!v || !wanted(v)) return v;
        changed = true;
        return f(v);
      });
      if (changed) patch.parameter = JSON.stringify(p);
      if (Object.keys(patch).length) await knex(table).where({ id: r.id }).update(patch);
    }
  }
}

export async function up(knex: Knex): Promise<void> {
  await convert(
    knex,
    (v) => sealKey(v),
    (v) => !isSealed(v),
  );
}

export async function down(knex: Knex): Promise<void> {
  await convert(knex, (v) => openKey(v), isSealed);
}
