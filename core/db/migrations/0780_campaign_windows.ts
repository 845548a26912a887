import type { Knex } from 'knex';

/**
 * Dial plans, pacing and AMD for campaigns (docs/campaigns.md):
 * - outplans: dialling windows (`dial_windows` in `timezone`; empty = any time) and a try interval per
 *   outcome (null = `try_interval`);
 * - campaigns: `amd` (the amd action's options; null = off) and `dial_rate` (attempts per minute, 0 = no limit);
 * - campaigncalls: what the attempt ended with (`result_reason`) and the AMD verdict (`amd_result`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outplans', (t) => {
    t.text('timezone').notNullable().defaultTo('UTC');
    t.jsonb('dial_windows').notNullable().defaultTo('[]');
    for (const o of ['busy', 'noanswer', 'failed', 'machine']) t.integer(`try_interval_${o}`).nullable();
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.jsonb('amd').nullable();
    t.integer('dial_rate').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('campaigncalls', (t) => {
    t.text('result_reason').notNullable().defaultTo('');
    t.text('amd_result').notNullable().defaultTo('');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigncalls', (t) => {
    t.dropColumn('result_reason');
    t.dropColumn('amd_result');
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('amd');
    t.dropColumn('dial_rate');
  });
  await knex.schema.alterTable('outplans', (t) => {
    t.dropColumn('timezone');
    t.dropColumn('dial_windows');
    for (const o of ['busy', 'noanswer', 'failed', 'machine']) t.dropColumn(`try_interval_${o}`);
  });
}
