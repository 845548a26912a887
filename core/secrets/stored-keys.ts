/**
 * Every vendor key stored in the database (docs/ai.md "Keys"): ais.engine_key and the keys in
 * ais.parameter and aicalls.parameter (core/secrets/keys.ts mapParameterKeys names them), and the same
 * in every version of an AI (ai_versions, migration 0972). Shared by migration 0958 (seal what was
 * stored in plain; it names the tables of its time) and the re-encryption command (rekey-cli.ts).
 */
import type { Knex } from 'knex';
import { mapParameterKeys } from './keys';

export const KEY_TABLES = ['ais', 'aicalls', 'ai_versions'] as const;
export type KeyTable = (typeof KEY_TABLES)[number];

/** Where a stored key is: its row and its field (`engine_key` or the parameter path). Never the key. */
export interface KeyPlace {
  table: KeyTable;
  id: string;
  field: string;
}

type Row = { id: string; engine_key?: string; parameter: Record<string, unknown> | string | null };

const param = (p: Row['parameter']): Record<string, unknown> => (typeof p === 'string' ? (JSON.parse(p) as Record<string, unknown>) : (p ?? {}));

/** A row's changes after passing each stored key `wanted` through `f` (with where it is); null when none. */
function rowPatch(table: KeyTable, r: Row, f: (v: string, at: KeyPlace) => string, wanted: (v: string) => boolean): Record<string, unknown> | null {
  const patch: Record<string, unknown> = {};
  if (typeof r.engine_key === 'string' && r.engine_key && wanted(r.engine_key)) patch.engine_key = f(r.engine_key, { table, id: r.id, field: 'engine_key' });
  let changed = false;
  const p = mapParameterKeys(param(r.parameter), (v, field) => {
    if (!v || !wanted(v)) return v;
    changed = true;
    return f(v, { table, id: r.id, field });
  });
  if (changed) patch.parameter = JSON.stringify(p);
  return Object.keys(patch).length ? patch : null;
}

/**
 * Passes every stored key for which `wanted` holds through `f` and writes the rows that changed.
 * All rows are computed before any is written, so an `f` that throws leaves the database as it was,
 * and `write` (asked once, after all were computed) can still decline; run it inside a transaction
 * to make the writes one change as well. Returns the rows that changed.
 */
export async function convertStoredKeys(
  knex: Knex,
  f: (v: string, at: KeyPlace) => string,
  wanted: (v: string) => boolean,
  write: () => boolean = () => true,
  tables: readonly KeyTable[] = KEY_TABLES,
): Promise<number> {
  const writes: [KeyTable, string, Record<string, unknown>][] = [];
  for (const table of tables) {
    const cols = table === 'aicalls' ? ['id', 'parameter'] : ['id', 'engine_key', 'parameter'];
    for (const r of (await knex(table).select(cols)) as Row[]) {
      const patch = rowPatch(table, r, f, wanted);
      if (patch) writes.push([table, r.id, patch]);
    }
  }
  if (write()) for (const [table, id, patch] of writes) await knex(table).where({ id }).update(patch);
  return writes.length;
}
