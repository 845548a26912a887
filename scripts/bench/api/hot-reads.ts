/**
 * The read an authenticated GET /v1.0/customer makes, several ways, CPU per read in one process and one
 * run (issue 25, the "prepared statements for hot reads" lever): the knex builder (what the route did
 * before), knex.raw with the same SQL, a named pg statement with `select *`, and the repo's
 * `customers.get` (what the route does: core/db/prepared.ts, columns listed). Baseline: `select 1` as a
 * named statement (the round trip alone).
 *   source .data/env && npx tsx scripts/bench/api/hot-reads.ts [--reads 5000]
 */
import os from 'node:os';
import knexFactory from 'knex';
import { createDb, migrate } from '../../../core/db/knex';
import { repos } from '../../../core/repos';
import { firstPrepared, prepared } from '../../../core/db/prepared';

const i = process.argv.indexOf('--reads');
const READS = i > 0 ? Number(process.argv[i + 1]) : 5000;

interface PgClient {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const one = prepared('bench_one', 'select 1');

async function cpuPerRead(label: string, read: () => Promise<unknown>): Promise<{ label: string; ms: number }> {
  for (let k = 0; k < 500; k++) await read(); // warm-up (JIT, pool, statement preparation)
  const c0 = process.cpuUsage();
  for (let k = 0; k < READS; k++) await read();
  const c = process.cpuUsage(c0);
  return { label, ms: (c.user + c.system) / 1000 / READS };
}

(async () => {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set (source .data/env)');
  const dbName = `platform_hotreads_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  await admin.raw('create database ??', [dbName]);
  const u = new URL(base);
  u.pathname = '/' + dbName;
  const db = createDb(u.toString(), { poolMax: 1 });
  try {
    await migrate(db);
    const r = repos(db);
    const c = await r.customers.create({ name: 'bench', email: 'bench@example.com' });
    const sql = 'select * from customers where id = $1 and tm_delete is null limit 1';
    const named = async (name: string, text: string, values: unknown[]) => {
      const conn = (await db.client.acquireConnection()) as PgClient;
      try {
        return (await conn.query({ name, text, values })).rows[0];
      } finally {
        await db.client.releaseConnection(conn);
      }
    };
    console.log(
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; ${READS} reads each, one pooled connection`,
    );
    await cpuPerRead('warm-up', () => firstPrepared(db, one, [])); // the first rows pay the JIT otherwise
    const rows = [
      await cpuPerRead('baseline: named `select 1`', () => firstPrepared(db, one, [])),
      await cpuPerRead('knex builder (what the route did before issue 25)', () => db('customers').where({ id: c.id }).whereNull('tm_delete').first()),
      await cpuPerRead('knex.raw, same SQL', () => db.raw('select * from customers where id = ? and tm_delete is null limit 1', [c.id])),
      await cpuPerRead('named pg statement, select * (prepared once per connection)', () => named('customer_get', sql, [c.id])),
      await cpuPerRead('repo customers.get (what the route does: prepared, columns listed)', () => r.customers.get(c.id)),
    ];
    const b = rows[0].ms;
    console.log('| read | CPU ms per read | vs baseline |\n|---|---:|---:|');
    for (const row of rows) console.log(`| ${row.label} | ${row.ms.toFixed(4)} | ${(row.ms / b).toFixed(2)} |`);
  } finally {
    await db.destroy();
    await admin.raw('drop database if exists ?? with (force)', [dbName]).catch(() => undefined);
    await admin.destroy();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
