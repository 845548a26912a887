import type { Knex } from 'knex';

/**
 * Issue 54: Twilio's Queue MaxSize. `max_size` caps the callers waiting in a queue (initiating,
 * waiting, connecting): a join beyond it is refused (TwiML <Enqueue>: QueueResult=queue-full). Null:
 * no limit (queues made through /v1.0).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('queues', (t) => {
    t.integer('max_size').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('queues', (t) => {
    t.dropColumn('max_size');
  });
}
