import type { Knex } from 'knex';

/**
 * The agent's session generation: every login and delegate token carries the generation its agent had
 * when it was signed (`gen`), and a token whose generation is below the agent's current one is refused.
 * A password change and an account freeze raise it, which signs out every session of the agent(s) at once.
 * (A single sign-out revokes one session id in Redis instead: control-api/middleware/sessions.ts.)
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.integer('session_generation').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('session_generation');
  });
}
