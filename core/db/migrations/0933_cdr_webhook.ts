import type { Knex } from 'knex';

/**
 * Issue 38 (records out, metrics): the webhook backlog gauge (`webhook_deliveries_pending`,
 * control-api/backlog-metrics.ts) counts pending deliveries on every Prometheus scrape. The delivery
 * log keeps every row, so that count reads a partial index of the pending rows only (a handful
 * normally) instead of scanning the log. The CDR webhook itself (`call_cdr`) needs no schema: its
 * opt-in is a customer metadata flag and its deliveries are ordinary rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (seq) WHERE status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_pending_idx');
}
