/**
 * Voicemail list benchmark (real Postgres, the real control-api over loopback HTTP): one box holds
 * 10,000 messages (plus 10,000 in another box of the customer); GET /voicemail_boxes/{id}/messages
 * is timed for the first page, a page deep in the list (page_token) and the folder filter, each
 * with its query plan. Target: < 200 ms per list (issue 37). Baseline in the same run: the list's
 * SQL alone through knex (no HTTP, auth, JSON).
 *
 *   set -a; source .data/env; set +a; npx tsx scripts/bench/pbx/voicemail-list.ts [--messages 10000] [--runs 50]
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { buildTestApp, createFixture } from '../../../testkit/api';
import { newId } from '../../../core/ids';
import { voicemailBoxesRepo } from '../../../core/voicemail/boxes';

const arg = (n: string, d: number) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const MESSAGES = arg('messages', 10_000);
const RUNS = arg('runs', 50);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function main(): Promise<void> {
  process.env.NODE_ENV ??= 'test';
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  const f = await createFixture(t.ctx);
  const db = t.ctx.db;
  const boxes = voicemailBoxesRepo(db);
  const box = await boxes.create(f.customer.id, { number: `9${Date.now() % 100000}`, pin: '1234' });
  const other = await boxes.create(f.customer.id, { number: `8${Date.now() % 100000}`, pin: '1234' });
  if (typeof box === 'string' || typeof other === 'string') throw new Error('box not created');
  const base = Date.now() - MESSAGES * 1000;
  for (const b of [box, other]) {
    const rows = Array.from({ length: MESSAGES }, (_, i) => ({
      id: newId(),
      customer_id: f.customer.id,
      box_id: b.id,
      folder: i % 3 === 0 ? ('new' as const) : ('old' as const),
      caller_number: `+1555${String(i).padStart(7, '0')}`,
      filename: `bench-${i}.wav`,
      duration_ms: 5000,
      tm_create: new Date(base + i * 1000),
    }));
    for (let i = 0; i < rows.length; i += 1000) await db('voicemail_messages').insert(rows.slice(i, i + 1000));
  }
  await db.raw('ANALYZE voicemail_messages');

  const server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const q = (extra: string) => `/v1.0/voicemail_boxes/${box.id}/messages?accesskey=${encodeURIComponent(f.accesskey)}&page_size=100${extra}`;
  // a cursor halfway down the list
  let token = '';
  for (let i = 0; i < MESSAGES / 200; i++) token = (JSON.parse((await get(port, q(token ? `&page_token=${encodeURIComponent(token)}` : ''))).body) as { next_page_token: string }).next_page_token;

  const cases: [string, string][] = [
    ['first page', q('')],
    ['page at the middle (page_token)', q(`&page_token=${encodeURIComponent(token)}`)],
    ['folder=new', q('&folder=new')],
  ];
  console.log(`voicemail list: ${MESSAGES} messages in the box (+${MESSAGES} in another), page_size 100, ${RUNS} runs each`);
  for (const [name, path] of cases) {
    const first = await get(port, path);
    if (first.status !== 200 || (JSON.parse(first.body) as { result: unknown[] }).result.length !== 100) throw new Error(`${name}: ${first.status} ${first.body.slice(0, 200)}`);
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      await get(port, path);
      ms.push(performance.now() - s);
    }
    console.log(`  ${name.padEnd(34)} p50 ${pct(ms, 50).toFixed(2)} ms  p99 ${pct(ms, 99).toFixed(2)} ms  max ${Math.max(...ms).toFixed(2)} ms`);
  }
  // baseline: the list's SQL alone, and its plan
  const sql = () =>
    db('voicemail_messages')
      .whereNull('tm_delete')
      .where({ box_id: box.id })
      .orderBy([
        { column: 'tm_create', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(101)
      .select('*');
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await sql();
    ms.push(performance.now() - s);
  }
  console.log(`  ${'baseline: the SQL alone (knex)'.padEnd(34)} p50 ${pct(ms, 50).toFixed(2)} ms  p99 ${pct(ms, 99).toFixed(2)} ms`);
  const plan = (await db.raw(`EXPLAIN ${sql().toString()}`)) as { rows: { 'QUERY PLAN': string }[] };
  console.log(`  plan: ${plan.rows.map((r) => r['QUERY PLAN'].trim()).join(' | ')}`);
  server.close();
  await db('voicemail_messages').whereIn('box_id', [box.id, other.id]).delete();
  await t.close();
  await db.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
