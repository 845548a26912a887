/**
 * Named (server-side prepared) statements for hot reads (issue 25). On the pool, the statement runs
 * straight on a pooled pg connection: no knex builder, compiler or runner per call, and Postgres
 * parses and plans it once per connection instead of once per call. In a transaction it runs unnamed
 * on the transaction's connection through knex.
 *
 * Write the column list out (never `select *`): a prepared `select *` fails with "cached plan must
 * not change result type" once a migration adds a column while a pooled connection holds the
 * statement. If a listed column's type itself changes, the first call on each connection that held
 * the old plan deallocates it and prepares again (once).
 *
 * Behind a pooler that does not keep named statements per client (PgBouncer in transaction mode before
 * 1.21, or without `max_prepared_statements`), Postgres answers "prepared statement ... does not exist"
 * (26000) or "... already exists" (42P05): the call is run again unnamed and the process stops naming
 * statements (still without knex per call).
 */
import type { Knex } from 'knex';
import type { Db } from './knex';

export interface PreparedStatement {
  /** Unique per statement text: pg refuses one name for two texts on a connection. */
  readonly name: string;
  /** SQL with $1..$n placeholders. */
  readonly text: string;
  /** The same SQL with `?` placeholders, for knex in a transaction. */
  readonly knexText: string;
}

const names = new Map<string, string>();

/** Declares a statement (module level: once per process). `text` uses $1..$n (in order, once each) and no `?`. */
export function prepared(name: string, text: string): PreparedStatement {
  if (text.includes('?')) throw new Error(`prepared ${name}: use $n placeholders, not ?`);
  if (/\bselect\s+\*/i.test(text)) throw new Error(`prepared ${name}: list the columns (a prepared select * breaks when a column is added)`);
  const order = (text.match(/\$\d+/g) ?? []).map((p) => Number(p.slice(1)));
  if (order.some((n, i) => n !== i + 1)) throw new Error(`prepared ${name}: placeholders must be $1..$n, in order, once each (the transaction path binds them by position)`);
  const prev = names.get(name);
  if (prev !== undefined && prev !== text) throw new Error(`prepared ${name}: declared twice with different SQL`);
  names.set(name, text);
  return { name, text, knexText: text.replace(/\$\d+/g, '?') };
}

/** What this module uses of a pooled pg client (pg.Client). */
interface PgConnection {
  query(q: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  query(text: string): Promise<unknown>;
  connection?: { parsedStatements?: Record<string, string>; submittedNamedStatements?: Record<string, string> };
}

/** Set once a pooler has shown it does not keep named statements: every later call runs unnamed. */
let unnamed = false;

/** Whether statements are still named in this process (false after a pooler refused them). */
export const namingStatements = (): boolean => !unnamed;

/** Names statements again, or stops (for a pooler known not to keep them); tests restore it. */
export function setStatementNaming(on: boolean): void {
  unnamed = !on;
}

const code = (e: unknown) => (e instanceof Error ? (e as { code?: string }).code : undefined);

function isStalePlan(e: unknown): boolean {
  return code(e) === '0A000' && e instanceof Error && /cached plan must not change result type/.test(e.message);
}

/** Forgets the statement on this connection (server and pg's client-side record) so the next call prepares it again. */
async function deallocate(conn: PgConnection, name: string): Promise<void> {
  await conn.query(`deallocate "${name.replace(/"/g, '""')}"`).catch(() => undefined);
  forget(conn, name);
}

/** Drops pg's client-side record of the statement on this connection. */
function forget(conn: PgConnection, name: string): void {
  if (conn.connection?.parsedStatements) delete conn.connection.parsedStatements[name];
  if (conn.connection?.submittedNamedStatements) delete conn.connection.submittedNamedStatements[name];
}

function isTransaction(db: Db): db is Knex.Transaction {
  return (db as { isTransaction?: boolean }).isTransaction === true;
}

/** Runs the statement and returns its rows (typed by the caller: the statement's column list). */
export async function runPrepared<T>(db: Db, stmt: PreparedStatement, values: unknown[]): Promise<T[]> {
  if (isTransaction(db)) {
    // Unnamed: not a hot path, and behind a transaction-mode pooler a failed named statement would abort the transaction.
    return ((await db.raw(stmt.knexText, values as Knex.RawBinding[])) as { rows: T[] }).rows;
  }
  const conn = (await db.client.acquireConnection()) as PgConnection;
  try {
    if (unnamed) return (await conn.query({ text: stmt.text, values })).rows as T[];
    const q = { name: stmt.name, text: stmt.text, values };
    try {
      return (await conn.query(q)).rows as T[];
    } catch (e) {
      if (isStalePlan(e)) {
        await deallocate(conn, stmt.name);
        return (await conn.query(q)).rows as T[];
      }
      if (code(e) !== '26000' && code(e) !== '42P05') throw e;
      unnamed = true;
      forget(conn, stmt.name);
      return (await conn.query({ text: stmt.text, values })).rows as T[];
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}

/** The first row, or null. */
export async function firstPrepared<T>(db: Db, stmt: PreparedStatement, values: unknown[]): Promise<T | null> {
  const rows = await runPrepared<T>(db, stmt, values);
  return rows[0] ?? null;
}
