import type { Knex } from 'knex';

/**
 * dtmf_mode on trunks and extensions (core/calls/dtmf-mode.ts): how the platform sends digits to
 * that party, rfc4733 (default, and what existing rows keep), info or inband.
 */
const TABLES = ['trunks', 'extensions'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.text('dtmf_mode').notNullable().defaultTo('rfc4733');
    });
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_dtmf_mode_check CHECK (dtmf_mode IN ('rfc4733', 'info', 'inband'))`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('dtmf_mode');
    });
  }
}
