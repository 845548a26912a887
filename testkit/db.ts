/**
 * The test database. Suites of several areas run at the same time on one Postgres, so each mocha
 * process gets its own database, `<TEST_DATABASE_URL's name>_p<pid>`, created and migrated on first
 * use and dropped after the run (stale ones of dead processes are dropped at start).
 * TEST_DB_ISOLATE=0 uses TEST_DATABASE_URL itself. Call `truncateAll()` in beforeEach.
 */
import knexFactory, { type Knex } from 'knex';
import { createDb, migrate } from '../core/db/knex';

let shared: Promise<{ db: Knex; url: string; dropOnExit: string | null }> | null = null;

function baseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run `source .data/env` (scripts/setup.sh writes it)');
  return url;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function setUp(): Promise<{ db: Knex; url: string; dropOnExit: string | null }> {
  const url = baseUrl();
  if (process.env.TEST_DB_ISOLATE === '0') {
    const db = createDb(url, { poolMax: 10 });
    await migrate(db);
    return { db, url, dropOnExit: null };
  }
  const u = new URL(url);
  const base = u.pathname.slice(1) || 'platform_test';
  const name = `${base}_p${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    const rows = (await admin.raw('select datname from pg_database where datname like ?', [`${base}\\_p%`])).rows as { datname: string }[];
    for (const { datname } of rows) {
      const pid = Number(datname.slice(base.length + 2));
      if (datname === name || (Number.isInteger(pid) && !alive(pid))) {
        await admin.raw('drop database if exists ?? with (force)', [datname]).catch(() => undefined);
      }
    }
    await admin.raw('create database ??', [name]);
  } finally {
    await admin.destroy();
  }
  u.pathname = '/' + name;
  const db = createDb(u.toString(), { poolMax: 10 });
  await migrate(db);
  return { db, url: u.toString(), dropOnExit: name };
}

/** The migrated knex of this test process (shared; do not destroy it). */
export async function testDb(): Promise<Knex> {
  shared ??= setUp();
  return (await shared).db;
}

/** Connection string of this process's test database. */
export async function testDatabaseUrl(): Promise<string> {
  shared ??= setUp();
  return (await shared).url;
}

/** Empties every table except knex's own (one statement, cascading). */
export async function truncateAll(db?: Knex): Promise<void> {
  const k = db ?? (await testDb());
  const rows = (await k.raw(`select tablename from pg_tables where schemaname = current_schema() and tablename not like 'knex\\_%'`)).rows as { tablename: string }[];
  if (rows.length === 0) return;
  await k.raw(`truncate table ${rows.map((r) => `"${r.tablename}"`).join(', ')} restart identity cascade`);
}

// Root-level hook (this module is loaded while mocha loads spec files): drop this process's database.
if (typeof after === 'function') {
  after(async function () {
    if (!shared) return;
    const { db, dropOnExit } = await shared;
    shared = null;
    await db.destroy();
    if (!dropOnExit) return;
    const admin = knexFactory({ client: 'pg', connection: baseUrl(), pool: { min: 0, max: 1 } });
    try {
      await admin.raw('drop database if exists ?? with (force)', [dropOnExit]);
    } catch {
      /* dropped at the next run */
    } finally {
      await admin.destroy();
    }
  });
}
