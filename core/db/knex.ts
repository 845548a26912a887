/** The knex instance (pg) and the migrator. One pool per process; close it with `db.destroy()`. */
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type { Knex };
export type Db = Knex | Knex.Transaction;
/** The table types (knex's `Tables` augmentation, declared once for every table). */
export type { Table, Write } from './tables';

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

/**
 * Runs every pending migration; returns the names that ran. Several processes may start at once
 * (control-api, media-app, set-up): the later ones wait for the first (up to `waitMs`) instead of failing.
 */
export async function migrate(db: Knex, opts: { waitMs?: number } = {}): Promise<string[]> {
  // knex's own lock row lives in a table it first has to create, which races on a fresh database;
  // a session advisory lock on a separate connection serialises the whole run.
  const conn = (db.client as { config: { connection: pg.ClientConfig } }).config.connection;
  const lock = new pg.Client(conn);
  await lock.connect();
  try {
    await lock.query(`set statement_timeout = ${Math.max(1000, opts.waitMs ?? 120_000)}`);
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const [, ran] = (await db.migrate.latest(migratorConfig)) as [number, string[]];
    return ran;
  } finally {
    await lock.end().catch(() => undefined); // ending the session releases the lock
  }
}

const MIGRATION_LOCK_KEY = 727273;

export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback(migratorConfig, true);
}
