/**
 * Dashboard benchmark (issue 38, docs/observability.md "Dashboard"): `--rows` ended calls of one
 * customer spread evenly over 30 days, each with a quality summary, as many of another customer's
 * calls beside them, and as many voice-agent turns (a caller message and its answer, 1,000 sessions),
 * then GET /v1.0/dashboard for each range over HTTP on loopback.
 * Prints the wall time of each request.
 * Goal: a 30-day dashboard of 100,000 calls in < 2 s.
 *   source .data/env && npx tsx scripts/bench/api/dashboard.ts [--rows 100000] [--runs 3]
 */
import os from 'node:os';
import { createFixture } from '../../../testkit/api';
import { serveBenchApp } from './served-app';
import { insertCalls } from '../../../testkit/cdr';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROWS = arg('--rows', 100_000);
const RUNS = arg('--runs', 3);
const END = new Date('2026-06-01T00:00:00Z');
const SPAN_MS = 30 * 86_400_000;

(async () => {
  const { t, base, close } = await serveBenchApp();
  try {
    const f = await createFixture(t.ctx);
    const other = await createFixture(t.ctx);
    const i0 = Date.now();
    const step = Math.floor(SPAN_MS / ROWS);
    // insertCalls multiplies in 32-bit integers: in parts of under 2^31 ms each
    const per = Math.max(1, Math.floor(2 ** 31 / step) - 1);
    for (const c of [f, other]) {
      for (let done = 0; done < ROWS; done += per) {
        await insertCalls(t.ctx.db, c.customer.id, Math.min(per, ROWS - done), new Date(END.getTime() - SPAN_MS + done * step), step);
      }
    }
    await t.ctx.db.raw(
      `UPDATE calls SET quality = jsonb_build_object('codec', 'PCMU', 'in', jsonb_build_object('mos_min', 3 + random() * 1.4, 'mos_avg', 4.3, 'loss_pct', 0, 'jitter_ms', 3, 'rtt_ms', 20), 'out', null)
        WHERE customer_id IN (?, ?)`,
      [f.customer.id, other.customer.id],
    );
    // voice-agent sessions: ROWS turns over the 30 days, a caller message and the answer 0.5-3.5 s later
    await t.ctx.db.raw(
      `INSERT INTO aicalls (id, customer_id, assistance_type, assistance_id, status, reference_type, reference_id, tm_create)
       SELECT ('00000000-0000-4000-8000-' || lpad(s::text, 12, '0'))::uuid, ?::uuid, 'ai', gen_random_uuid(), 'terminated', 'call', gen_random_uuid(), ?::timestamptz
         FROM generate_series(0, 999) s`,
      [f.customer.id, new Date(END.getTime() - SPAN_MS)],
    );
    await t.ctx.db.raw(
      `INSERT INTO aimessages (id, customer_id, aicall_id, role, content, direction, tm_create)
       SELECT gen_random_uuid(), ?::uuid, ('00000000-0000-4000-8000-' || lpad((i % 1000)::text, 12, '0'))::uuid, r.role, r.role,
              CASE r.role WHEN 'user' THEN 'incoming' ELSE 'outgoing' END,
              ?::timestamptz + (i::float8 * ?) * interval '1 millisecond' + CASE r.role WHEN 'user' THEN interval '0' ELSE (500 + random() * 3000) * interval '1 millisecond' END
         FROM generate_series(0, ? - 1) i CROSS JOIN (VALUES ('user'), ('assistant')) r(role)`,
      [f.customer.id, new Date(END.getTime() - SPAN_MS), step, ROWS],
    );
    await t.ctx.db.raw('ANALYZE calls');
    await t.ctx.db.raw('ANALYZE aimessages');
    console.log(
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; 2 × ${ROWS} calls inserted in ${Date.now() - i0} ms`,
    );
    console.log('| range | run | calls counted | AI turns | ms |\n|---|---:|---:|---:|---:|');
    for (const range of ['1h', '24h', '7d', '30d']) {
      for (let run = 1; run <= RUNS; run++) {
        const s0 = Date.now();
        const res = await fetch(`${base}/v1.0/dashboard?accesskey=${encodeURIComponent(f.accesskey)}&range=${range}&end=${END.toISOString()}`);
        const body = (await res.json()) as { totals: { calls: number; ai_reply_ms: { turns: number } | null } };
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        console.log(`| ${range} | ${run} | ${body.totals.calls} | ${body.totals.ai_reply_ms?.turns ?? 0} | ${Date.now() - s0} |`);
      }
    }
  } finally {
    await close();
  }
})().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
