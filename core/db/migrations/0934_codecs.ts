import type { Knex } from 'knex';

/**
 * codecs (core/calls/codecs.ts): the ordered codec list of trunks, extensions and providers, a text[]
 * of engine names. Trunks and providers default G.711 first, extensions wideband first. Providers had
 * a free-form comma-separated `codecs` text: it becomes the list, its known names kept in order
 * (matched without case), and the default where none was known.
 */
const TRUNK_DEFAULT = ['PCMU', 'PCMA', 'G722', 'opus'];
const EXTENSION_DEFAULT = ['G722', 'opus', 'PCMU', 'PCMA'];
const KNOWN = new Map(['PCMU', 'PCMA', 'G722', 'opus'].map((c) => [c.toLowerCase(), c]));

/** A constant list as an SQL array literal (DDL takes no bind parameters; the names are ours). */
const arrayLiteral = (list: string[]) => `'{${list.join(',')}}'::text[]`;

function fromText(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const c = KNOWN.get(part.trim().toLowerCase());
    if (c && !out.includes(c)) out.push(c);
  }
  return out.length ? out : TRUNK_DEFAULT;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE trunks ADD COLUMN codecs text[] NOT NULL DEFAULT ${arrayLiteral(TRUNK_DEFAULT)}`);
  await knex.raw(`ALTER TABLE extensions ADD COLUMN codecs text[] NOT NULL DEFAULT ${arrayLiteral(EXTENSION_DEFAULT)}`);
  await knex.raw(`ALTER TABLE providers ADD COLUMN codec_list text[] NOT NULL DEFAULT ${arrayLiteral(TRUNK_DEFAULT)}`);
  const rows = (await knex('providers').select('id', 'codecs')) as { id: string; codecs: string | null }[];
  // raw SQL: the table types (core/db/tables.ts) describe the schema after this migration, not during it
  for (const r of rows) await knex.raw('UPDATE providers SET codec_list = ? WHERE id = ?', [fromText(r.codecs ?? ''), r.id]);
  await knex.schema.alterTable('providers', (t) => t.dropColumn('codecs'));
  await knex.schema.alterTable('providers', (t) => t.renameColumn('codec_list', 'codecs'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('trunks', (t) => t.dropColumn('codecs'));
  await knex.schema.alterTable('extensions', (t) => t.dropColumn('codecs'));
  await knex.raw(`ALTER TABLE providers ALTER COLUMN codecs DROP DEFAULT`);
  await knex.raw(`ALTER TABLE providers ALTER COLUMN codecs TYPE text USING array_to_string(codecs, ',')`);
  await knex.raw(`ALTER TABLE providers ALTER COLUMN codecs SET DEFAULT ''`);
}
