import type { Knex } from 'knex';

/**
 * Issue 36: conferences by friendly name (TwiML <Dial><Conference>name</Conference>). A room made by a
 * name ends when its last participant leaves (`ends_when_empty`), and at most one such room per
 * customer and name is live at a time: the partial unique index is what two nodes racing to make it
 * meet, so both land in one room. `max_participants` (0: no limit) caps joins. Each participant keeps
 * how it joined (`end_on_exit`, `label`), so the node hosting the room applies it whichever
 * node the call is on. Queues made by a name (TwiML <Enqueue>name) are `made_by_name`, one live per
 * customer and name by the same kind of index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferences', (t) => {
    t.boolean('ends_when_empty').notNullable().defaultTo(false);
    t.integer('max_participants').notNullable().defaultTo(0);
  });
  await knex.raw(`CREATE UNIQUE INDEX conferences_live_name_uq ON conferences (customer_id, name) WHERE ends_when_empty AND status IN ('starting','progressing') AND tm_delete IS NULL`);
  await knex.schema.alterTable('queues', (t) => {
    t.boolean('made_by_name').notNullable().defaultTo(false);
  });
  await knex.raw(`CREATE UNIQUE INDEX queues_made_name_uq ON queues (customer_id, name) WHERE made_by_name AND tm_delete IS NULL`);
  await knex.schema.alterTable('conferencecalls', (t) => {
    t.boolean('end_on_exit').notNullable().defaultTo(false);
    t.text('label').notNullable().defaultTo('');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('conferencecalls', (t) => {
    t.dropColumn('label');
    t.dropColumn('end_on_exit');
  });
  await knex.raw('DROP INDEX IF EXISTS queues_made_name_uq');
  await knex.schema.alterTable('queues', (t) => {
    t.dropColumn('made_by_name');
  });
  await knex.raw('DROP INDEX IF EXISTS conferences_live_name_uq');
  await knex.schema.alterTable('conferences', (t) => {
    t.dropColumn('max_participants');
    t.dropColumn('ends_when_empty');
  });
}
