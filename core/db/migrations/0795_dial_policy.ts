import type { Knex } from 'knex';

/**
 * Toll-fraud policy (core/calls/dial-policy.ts): a per-customer cap on live outgoing PSTN calls
 * (null = the platform default DIAL_MAX_CONCURRENT_PSTN_CALLS), and an index for counting them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('customers', (t) => {
    t.integer('max_concurrent_pstn_calls').nullable();
  });
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_max_concurrent_pstn_calls_check CHECK (max_concurrent_pstn_calls IS NULL OR max_concurrent_pstn_calls >= 0)`);
  await knex.raw(`CREATE INDEX calls_live_pstn_admitted ON calls (customer_id) WHERE status <> 'hangup' AND direction = 'outgoing' AND (data->>'pstn_admitted') = 'true'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS calls_live_pstn_admitted');
  await knex.schema.alterTable('customers', (t) => {
    t.dropColumn('max_concurrent_pstn_calls');
  });
}
