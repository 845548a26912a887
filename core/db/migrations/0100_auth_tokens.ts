import type { Knex } from 'knex';

// Mail tokens of the auth group. Only the SHA-256 of a token is kept. Several verification tokens of one
// customer may be valid at once (spec Limits: each stays valid until its own expiry).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_verification_tokens', (t) => {
    t.text('token_hash').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_expire', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_used', { useTz: true, precision: 6 }).nullable();
    t.index(['customer_id']);
  });
  await knex.schema.createTable('password_reset_tokens', (t) => {
    t.text('token_hash').primary();
    t.uuid('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.uuid('agent_id').notNullable().references('id').inTable('agents').onDelete('CASCADE');
    t.timestamp('tm_create', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_expire', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('tm_used', { useTz: true, precision: 6 }).nullable();
    t.index(['agent_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('password_reset_tokens');
  await knex.schema.dropTable('email_verification_tokens');
}
