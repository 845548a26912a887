import type { Knex } from 'knex';

/**
 * Addresses written in one transaction share a tm_create; an insertion sequence keeps them in the
 * order the customer gave them (a UUID tiebreak would shuffle them).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contact_addresses', (t) => {
    t.bigIncrements('seq', { primaryKey: false });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contact_addresses', (t) => {
    t.dropColumn('seq');
  });
}
