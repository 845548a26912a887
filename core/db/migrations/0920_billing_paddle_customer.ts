import type { Knex } from 'knex';

/**
 * The Paddle customer (`ctm_...`) a billing account is linked to, set by the operator; '' when none.
 * POST /billing_account/paddle_portal_session opens that customer's Paddle portal.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('billing_accounts', (t) => {
    t.text('paddle_customer_id').notNullable().defaultTo('');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('billing_accounts', (t) => {
    t.dropColumn('paddle_customer_id');
  });
}
