/**
 * The read an authenticated GET /v1.0/customer makes, three ways, CPU per read in one process and one
 * run (issue 25, the "prepared statements for hot reads" lever): the repo's knex builder (what the
 * route does), knex.raw with the same SQL, and a named (server-side prepared) pg statement on a
 * connection of the same pool. Baseline: `select 1` as a named statement (the round trip alone).
 *   source .data/env && npx tsx scripts/bench/api/hot-reads.ts [--reads 5000]
 */
import os from 'node:os';
import knexFactory from 'knex';
import { createDb, migrate } from '../../../core/db/knex';
import { repos } from '../../../core/repos';

const i = process.argv.indexOf('--reads');
const READS = i > 0 ? Number(process.argv[i + 1]) : 5000;

interface PgClient {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

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
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${READS} reads each, one pooled connection`);
    await cpuPerRead('warm-up', () => named('bench_one', 'select 1', [])); // the first rows pay the JIT otherwise
    const rows = [
      await cpuPerRead('baseline: named `select 1`', () => named('bench_one', 'select 1', [])),
      await cpuPerRead('repo customers.get (knex builder, what the route does)', () => r.customers.get(c.id)),
      await cpuPerRead('knex.raw, same SQL', () => db.raw('select * from customers where id = ? and tm_delete is null limit 1', [c.id])),
      await cpuPerRead('named pg statement (prepared once per connection)', () => named('customer_get', sql, [c.id])),
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
