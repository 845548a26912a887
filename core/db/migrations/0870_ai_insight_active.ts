import type { Knex } from 'knex';

/**
 * The customer's active Insight AI (POST /ais/{id}/activate_insight): at most one live AI per
 * customer has is_insight_active, and only a type=insight one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ais', (t) => {
    t.boolean('is_insight_active').notNullable().defaultTo(false);
  });
  await knex.raw(`ALTER TABLE ais ADD CONSTRAINT ais_insight_active_type_check CHECK (NOT is_insight_active OR type = 'insight')`);
  await knex.raw('CREATE UNIQUE INDEX ais_insight_active_uq ON ais (customer_id) WHERE is_insight_active AND tm_delete IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS ais_insight_active_uq');
  await knex.schema.alterTable('ais', (t) => {
    t.dropChecks(['ais_insight_active_type_check']);
    t.dropColumn('is_insight_active');
  });
}
