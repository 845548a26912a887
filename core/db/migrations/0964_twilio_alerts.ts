import type { Knex } from 'knex';

/**
 * Issue 54: Twilio's debugger records (the Monitor API's Alerts, the 2010 API's Notifications): one row
 * per error or warning a customer's TwiML application caused (11200 fetch failure, 12100 parse error,
 * 12200 schema error, 13212 bad Dial timeout ...). `call_id` is the call it happened on (no foreign key:
 * the record outlives a deleted call, as Twilio's does). The request's variables are stored with
 * credential-like values masked (core/twilio/alerts.ts); nothing here is a secret of ours.
 * twilio_debugger_webhooks: the account's Debugger webhook (one URL per customer), which each new alert
 * is POSTed to, signed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('twilio_alerts', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('call_id').nullable();
    t.integer('error_code').notNullable();
    // error | warning (Twilio's log_level; Notifications' `log` 0 / 1)
    t.text('log_level').notNullable();
    t.text('alert_text').notNullable();
    t.text('request_method').notNullable().defaultTo('');
    t.text('request_url').notNullable().defaultTo('');
    t.text('request_variables').notNullable().defaultTo('');
    t.text('response_body').notNullable().defaultTo('');
    t.text('response_headers').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['customer_id', 'tm_create', 'id']);
  });
  await knex.raw(`ALTER TABLE twilio_alerts ADD CONSTRAINT twilio_alerts_log_level_check CHECK (log_level IN ('error','warning'))`);
  await knex.schema.createTable('twilio_debugger_webhooks', (t) => {
    t.uuid('customer_id').primary().references('id').inTable('customers').onDelete('CASCADE');
    t.text('url').notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('twilio_debugger_webhooks');
  await knex.schema.dropTable('twilio_alerts');
}
