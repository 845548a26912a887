import type { Knex } from 'knex';

/**
 * Queues and their queuecalls (agents already exist: 0002). Timeouts are milliseconds, as voipbin's
 * queue-manager keeps them; 0 means none.
 */
export async function up(knex: Knex): Promise<void> {
  const tm = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true, precision: 6 }).nullable();
  await knex.schema.createTable('queues', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    t.text('detail').notNullable().defaultTo('');
    t.text('routing_method').notNullable().defaultTo('random');
    t.jsonb('tag_ids').notNullable().defaultTo('[]');
    t.uuid('wait_flow_id').notNullable().defaultTo('00000000-0000-0000-0000-000000000000');
    t.integer('wait_timeout').notNullable().defaultTo(0);
    t.integer('service_timeout').notNullable().defaultTo(0);
    t.text('direct_hash').notNullable().defaultTo('');
    t.integer('total_incoming_count').notNullable().defaultTo(0);
    t.integer('total_serviced_count').notNullable().defaultTo(0);
    t.integer('total_abandoned_count').notNullable().defaultTo(0);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
  });

  await knex.schema.createTable('queuecalls', (t) => {
    t.uuid('id').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('queue_id').notNullable();
    t.text('reference_type').notNullable().defaultTo('call');
    t.uuid('reference_id').notNullable();
    t.uuid('reference_activeflow_id').notNullable().defaultTo('00000000-0000-0000-0000-000000000000');
    t.text('status').notNullable().defaultTo('initiating');
    t.uuid('service_agent_id').notNullable().defaultTo('00000000-0000-0000-0000-000000000000');
    t.text('node_id').notNullable().defaultTo('');
    t.integer('timeout_wait').notNullable().defaultTo(0);
    t.integer('timeout_service').notNullable().defaultTo(0);
    t.integer('duration_waiting').notNullable().defaultTo(0);
    t.integer('duration_service').notNullable().defaultTo(0);
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    tm(t, 'tm_service');
    tm(t, 'tm_end');
    tm(t, 'tm_update');
    tm(t, 'tm_delete');
    t.index(['customer_id', 'tm_create', 'id']);
    t.index(['queue_id', 'status']);
    t.index(['reference_id']);
  });
  await knex.raw(`ALTER TABLE queuecalls ADD CONSTRAINT queuecalls_status_check CHECK (status IN ('initiating','waiting','connecting','kicking','service','done','abandoned'))`);
  // The dispatcher's lookup: available agents of a customer.
  await knex.raw(`CREATE INDEX agents_customer_status ON agents (customer_id, status) WHERE tm_delete IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS agents_customer_status');
  await knex.schema.dropTable('queuecalls');
  await knex.schema.dropTable('queues');
}
