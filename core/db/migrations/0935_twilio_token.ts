import type { Knex } from 'knex';

/**
 * Issue 36 (Twilio-compatible layer): the generation of a customer's derived AuthToken
 * (core/twilio/auth-token.ts). The token itself is never stored; raising the number rotates it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('customers', (t) => {
    t.integer('twilio_token_generation').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('customers', (t) => {
    t.dropColumn('twilio_token_generation');
  });
}
