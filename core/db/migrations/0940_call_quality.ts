import type { Knex } from 'knex';

/**
 * Issue 38 (call quality per leg): the call record's `quality` (core/quality/leg.ts CallQuality:
 * codec, and per direction the lowest and mean MOS, loss %, jitter and RTT), written by the media
 * node when the call ends; null for a call that never carried media, and for calls older than this.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calls ADD COLUMN quality jsonb NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE calls DROP COLUMN IF EXISTS quality');
}
