/**
 * CDR export benchmark (issue 38, docs/observability.md): 100,000 call rows of one customer, then
 * GET /v1.0/calls/export of all of them, CSV and JSON lines, read by curl (another process) from the
 * control-api app on loopback. Prints wall time, rows/s, bytes and this process's RSS growth during the
 * run (after a full GC before it).
 * Goal: 100,000 records in < 10 s without holding them in memory.
 *   source .data/env && npx tsx scripts/bench/api/cdr-export.ts [--rows 100000] [--runs 3]
 */
import os from 'node:os';
import { spawn } from 'node:child_process';
import { createFixture } from '../../../testkit/api';
import { serveBenchApp } from './served-app';
import { insertCalls } from '../../../testkit/cdr';
import { collectGarbage } from '../../../testkit/gc';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROWS = arg('--rows', 100_000);
const RUNS = arg('--runs', 3);

function curl(url: string): Promise<{ code: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    p.stdout.on('data', (d: Buffer) => (s += d.toString()));
    p.on('error', reject);
    p.on('exit', () => {
      const [code, bytes] = s.trim().split(' ').map(Number) as [number, number];
      resolve({ code, bytes });
    });
  });
}

(async () => {
  const { t, base, close } = await serveBenchApp();
  try {
    const f = await createFixture(t.ctx);
    const i0 = Date.now();
    await insertCalls(t.ctx.db, f.customer.id, ROWS, new Date('2026-05-01T00:00:00Z'), 500);
    console.log(
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; ${ROWS} calls inserted in ${Date.now() - i0} ms`,
    );
    console.log('| format | run | rows | MB | ms | rows/s | RSS growth MB |\n|---|---:|---:|---:|---:|---:|---:|');
    for (const format of ['csv', 'jsonl']) {
      for (let run = 1; run <= RUNS; run++) {
        await collectGarbage(); // what earlier runs left is not counted against this one
        const rss0 = process.memoryUsage().rss;
        let peak = rss0;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
        const s0 = Date.now();
        const r = await curl(`${base}/v1.0/calls/export?accesskey=${encodeURIComponent(f.accesskey)}&start=2026-05-01T00:00:00Z&end=2026-05-31T00:00:00Z&format=${format}`);
        const ms = Date.now() - s0;
        clearInterval(sampler);
        if (r.code !== 200) throw new Error(`export answered ${r.code}`);
        console.log(`| ${format} | ${run} | ${ROWS} | ${(r.bytes / 1e6).toFixed(1)} | ${ms} | ${Math.round((ROWS * 1000) / ms)} | ${((peak - rss0) / 1e6).toFixed(1)} |`);
      }
    }
  } finally {
    await close();
    await t.ctx.db.destroy();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
