import type { Knex } from 'knex';

/**
 * The Twilio alerts retention pass (core/repos/twilio-alerts.ts pruneBefore, every customer's records
 * older than TWILIO_ALERTS_RETENTION_DAYS, 5000 a statement) by time: the (customer_id, tm_create, id)
 * index of 0964 leads with the customer, so without this one each batch scanned the whole table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX twilio_alerts_tm_create_id ON twilio_alerts (tm_create, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS twilio_alerts_tm_create_id');
}
