import type { Knex } from 'knex';

/**
 * Issue 38 (quality alarms across customers, GET /quality_alarms): the stored `call_quality_alarm`
 * events by time, platform-wide and per customer. Partial: only the alarms are indexed, a small share
 * of the events table, so the timelines' writes pay for them alone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX events_quality_alarms_time ON events ("timestamp", seq) WHERE event_type = 'call_quality_alarm'`);
  await knex.raw(`CREATE INDEX events_quality_alarms_customer_time ON events (customer_id, "timestamp", seq) WHERE event_type = 'call_quality_alarm'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS events_quality_alarms_customer_time');
  await knex.raw('DROP INDEX IF EXISTS events_quality_alarms_time');
}
