import type { Knex } from 'knex';

/**
 * The events store (timelines) and the webhook delivery log. `events` is written by a consumer-group
 * reader of the event stream; the primary key is the event id, so a redelivered event is ignored.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.uuid('id').primary();
    // Stream order: events of the same millisecond keep the order they were published in.
    t.specificType('seq', 'bigserial').notNullable();
    t.uuid('customer_id').notNullable();
    t.text('event_type').notNullable();
    t.text('resource').notNullable();
    t.uuid('resource_id').notNullable();
    t.uuid('activeflow_id').nullable();
    t.timestamp('timestamp', { useTz: true, precision: 6 }).notNullable();
    t.jsonb('data').notNullable();
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.index(['customer_id', 'resource_id', 'timestamp']);
    t.index(['customer_id', 'activeflow_id', 'timestamp']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    // Delivery order within a customer (the stream order in which the dispatcher saw the events).
    t.specificType('seq', 'bigserial').notNullable();
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    // customer (its webhook_uri) or activeflow (the activeflow's own webhook)
    t.text('target').notNullable();
    t.text('uri').notNullable();
    t.text('method').notNullable();
    // The exact body sent (the same bytes on every retry, so the signature stays verifiable).
    t.text('body').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('response_status').notNullable().defaultTo(0);
    t.text('error').notNullable().defaultTo('');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_update', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id', 'tm_create', 'id']);
    t.unique(['event_id', 'target']);
    t.index(['customer_id', 'status', 'seq']);
  });
  await knex.raw(`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending','delivered','failed','refused'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('events');
}
