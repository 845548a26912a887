/** The knex instance (pg) and the migrator. One pool per process; close it with `db.destroy()`. */
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex };
export type Db = Knex | Knex.Transaction;

// timestamptz as JS Date (default), int8 (bigint) as number: our int8 columns are small counters.
pg.types.setTypeParser(20, (v: string) => Number(v));

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

export function createDb(databaseUrl: string, opts: { poolMax?: number; poolMin?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'platform' },
    pool: { min: opts.poolMin ?? 0, max: opts.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
  });
}

const migratorConfig: Knex.MigratorConfig = {
  directory: MIGRATIONS_DIR,
  loadExtensions: ['.ts', '.js'],
  tableName: 'knex_migrations',
  // Each migration file runs in its own transaction, so a failure leaves the schema as it was.
  disableMigrationsListValidation: false,
};

/** Runs every pending migration; returns the names that ran. */
export async function migrate(db: Knex): Promise<string[]> {
  const [, ran] = (await db.migrate.latest(migratorConfig)) as [number, string[]];
  return ran;
}

export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback(migratorConfig, true);
}
