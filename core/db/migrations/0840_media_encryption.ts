import type { Knex } from 'knex';

/**
 * media_encryption on trunks, providers and extensions (core/sip/media-encryption.ts): none, sdes
 * (SDES-SRTP) or dtls (DTLS-SRTP + ICE), through rtpengine. Existing rows keep plain RTP ('none').
 */
const TABLES = ['trunks', 'providers', 'extensions'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.text('media_encryption').notNullable().defaultTo('none');
    });
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_media_encryption_check CHECK (media_encryption IN ('none', 'sdes', 'dtls'))`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('media_encryption');
    });
  }
}
