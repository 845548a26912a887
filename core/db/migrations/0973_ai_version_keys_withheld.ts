import type { Knex } from 'knex';
import { KEY_PATHS, withheld, type Keyed } from '../../secrets/version-keys';

/**
 * A version keeps a vendor key no longer than it is the AI's (docs/ai.md "Versions"): `keys_withheld`
 * lists the key paths blanked in a version (superseded by a later version's key for the same place, or
 * every key once the AI was deleted). Here: the versions of the AIs already deleted lose their keys.
 * Keys superseded before this migration go at the AI's next key change (every earlier version's key
 * for that place) or its deletion: telling a rotated key from a kept one needs them opened.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_versions', (t) => {
    t.jsonb('keys_withheld').notNullable().defaultTo('[]');
  });
  const rows = (await knex('ai_versions as v').join('ais as a', 'a.id', 'v.ai_id').whereNotNull('a.tm_delete').select('v.id', 'v.engine_key', 'v.parameter')) as {
    id: string;
    engine_key: string;
    parameter: Keyed['parameter'];
  }[];
  for (const r of rows) {
    const w = withheld({ engine_key: r.engine_key, parameter: r.parameter }, KEY_PATHS);
    if (!w.paths.length) continue;
    await knex('ai_versions')
      .where({ id: r.id })
      .update({ engine_key: '', parameter: JSON.stringify(w.row.parameter ?? {}), keys_withheld: JSON.stringify(w.paths) });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ai_versions', (t) => {
    t.dropColumn('keys_withheld');
  });
}
