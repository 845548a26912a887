/**
 * The console dashboard's figures (GET /v1.0/dashboard, docs/observability.md "Dashboard"): one
 * customer's calls and webhook deliveries over a range, in fixed buckets, aggregated by Postgres so
 * that what leaves the database is one row per bucket (at most 120), the MOS histogram's bins and the
 * worst calls, whatever the range holds.
 *
 * - Calls, answered, ACD: calls created in the bucket; answered = reached `tm_progressing`; ACD the mean
 *   answer-to-hangup time of the answered calls that have ended.
 * - Peak concurrent calls: calls in progress (from `tm_progressing` to `tm_hangup`, or now while live),
 *   the highest count reached in the bucket. Calls created more than `LOOKBACK` before the range are not
 *   read (keeps the scan on the `(customer_id, tm_create)` index; a call longer than that is rare, and a
 *   call left without a hangup time by a crash would otherwise count for ever).
 * - MOS: each call's lowest sampled MOS over both directions (`quality.in/out.mos_min`).
 * - Webhook failures: deliveries created in the bucket whose status is `failed` or `refused`.
 * - AI reply time: in voice-agent sessions (aicalls on a call), from each caller message recorded (the
 *   recogniser's final words) to the next message, when that is the assistant's (recorded once its
 *   answer, or its first tool call, is complete); p50/p90/p99 per bucket and over the range.
 * - AI turn latency: of those turns, the ones whose answer carries `metadata.latency` (media-app
 *   ai/turn-latency.ts): p50/p90/p99 of the caller's speech end to the reply's first audio out
 *   (`first_rtp_ms`) and of each stage; a stage is counted where the turn has a number for it.
 *
 * The response's shape is core/calls/dashboard-schema.ts (one zod declaration, shared with the route and
 * the console). Each figure has its own query below; `dashboard` runs them at once and fills the buckets.
 */
import type { Db } from '../db/knex';
import {
  AI_LATENCY_STAGES,
  DASHBOARD_RANGES,
  MOS_BINS,
  WORST_CALLS,
  type AiLatency,
  type AiLatencyStage,
  type Dashboard,
  type DashboardBucket,
  type DashboardRange,
  type Percentiles,
  type WorstCall,
} from './dashboard-schema';

/** How far before the range a call's creation may lie and still count as concurrent. */
export const LOOKBACK_MS = 86_400_000;

/** The range's end rounded up to a bucket boundary (so buckets stay put as time passes), and its start. */
export function dashboardWindow(range: DashboardRange, now: Date): { start: Date; end: Date; stepMs: number } {
  const { rangeMs, stepMs } = DASHBOARD_RANGES[range];
  const end = Math.floor(now.getTime() / stepMs) * stepMs + stepMs;
  return { start: new Date(end - rangeMs), end: new Date(end), stepMs };
}

/** What every figure's query reads: the customer, the window, and the bucket of a timestamp column. */
interface Scope {
  db: Db;
  customerId: string;
  start: Date;
  end: Date;
  /** Bucket width in seconds; `n` buckets. */
  step: number;
  n: number;
}

const MOS_MIN_SQL = `least((quality->'in'->>'mos_min')::float8, (quality->'out'->>'mos_min')::float8)`;
const bucketOf = (col: string) => `floor(extract(epoch from (${col} - ?::timestamptz)) / ?)::int`;
const inRange = (s: Scope, b: number | null): b is number => b !== null && b >= 0 && b < s.n;

export async function dashboard(db: Db, customerId: string, range: DashboardRange, now: Date): Promise<Dashboard> {
  const { start, end, stepMs } = dashboardWindow(range, now);
  const s: Scope = { db, customerId, start, end, step: stepMs / 1000, n: Math.round((end.getTime() - start.getTime()) / stepMs) };
  const buckets: DashboardBucket[] = Array.from({ length: s.n }, (_, i) => ({
    t: new Date(start.getTime() + i * stepMs).toISOString(),
    calls: 0,
    answered: 0,
    acd_sec: null,
    concurrent_peak: 0,
    webhook_deliveries: 0,
    webhook_failures: 0,
    ai_reply_ms: null,
    ai_latency_ms: null,
  }));
  const [calls, , , ai, counts, worst] = await Promise.all([callFigures(s, buckets), concurrency(s, buckets), webhookFigures(s, buckets), aiFigures(s, buckets), mosHistogram(s), worstCalls(s)]);
  const sum = (k: 'webhook_deliveries' | 'webhook_failures') => buckets.reduce((t, b) => t + b[k], 0);
  return {
    range,
    start: start.toISOString(),
    end: end.toISOString(),
    bucket_sec: s.step,
    buckets,
    totals: {
      ...calls,
      concurrent_peak: buckets.reduce((m, b) => Math.max(m, b.concurrent_peak), 0),
      webhook_deliveries: sum('webhook_deliveries'),
      webhook_failures: sum('webhook_failures'),
      ...ai,
    },
    mos_histogram: { edges: [...MOS_BINS], counts },
    worst_calls: worst,
  };
}

/** Calls, answered and ACD per bucket; the range's totals of those, its ASR and mean lowest MOS. */
async function callFigures(s: Scope, buckets: DashboardBucket[]): Promise<Pick<Dashboard['totals'], 'calls' | 'answered' | 'asr' | 'acd_sec' | 'mos_avg'>> {
  const { rows } = await s.db.raw<{ rows: { b: number; calls: string; answered: string; acd: number | null; ended: string; mos_sum: number | null; mos_n: string }[] }>(
    `SELECT ${bucketOf('tm_create')} AS b, count(*) AS calls, count(tm_progressing) AS answered,
            avg(extract(epoch from (tm_hangup - tm_progressing))) FILTER (WHERE tm_progressing IS NOT NULL AND tm_hangup IS NOT NULL) AS acd,
            count(*) FILTER (WHERE tm_progressing IS NOT NULL AND tm_hangup IS NOT NULL) AS ended,
            sum(${MOS_MIN_SQL}) AS mos_sum, count(${MOS_MIN_SQL}) AS mos_n
       FROM calls
      WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ?
      GROUP BY 1`,
    [s.start, s.step, s.customerId, s.start, s.end],
  );
  let calls = 0;
  let answered = 0;
  let acdSum = 0;
  let acdN = 0;
  let mosSum = 0;
  let mosN = 0;
  for (const r of rows) {
    if (!inRange(s, r.b)) continue;
    const bucket = buckets[r.b]!;
    bucket.calls = Number(r.calls);
    bucket.answered = Number(r.answered);
    bucket.acd_sec = r.acd === null ? null : round(Number(r.acd), 1);
    calls += bucket.calls;
    answered += bucket.answered;
    if (r.acd !== null) {
      acdSum += Number(r.acd) * Number(r.ended);
      acdN += Number(r.ended);
    }
    if (r.mos_sum !== null) {
      mosSum += Number(r.mos_sum);
      mosN += Number(r.mos_n);
    }
  }
  return {
    calls,
    answered,
    asr: calls ? round(answered / calls, 4) : null,
    acd_sec: acdN ? round(acdSum / acdN, 1) : null,
    mos_avg: mosN ? round(mosSum / mosN, 2) : null,
  };
}

/**
 * Peak concurrent calls per bucket: +1 at answer (or the range's start), -1 at hangup; a running sum in
 * time order; per bucket the highest level reached and the level it ends with (carried into the buckets
 * without a change).
 */
async function concurrency(s: Scope, buckets: DashboardBucket[]): Promise<void> {
  const { rows } = await s.db.raw<{ rows: { b: number; peak: string; last: string }[] }>(
    `WITH iv AS (
       SELECT greatest(tm_progressing, ?::timestamptz) AS a, tm_hangup AS z FROM calls
        WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ?
          AND tm_progressing IS NOT NULL AND tm_progressing < ? AND (tm_hangup IS NULL OR tm_hangup > ?)
     ), ev AS (
       SELECT a AS t, 1 AS d FROM iv UNION ALL SELECT z, -1 FROM iv WHERE z IS NOT NULL AND z < ?
     ), run AS (
       SELECT t, d, sum(d) OVER (ORDER BY t, d) AS level FROM ev
     )
     SELECT ${bucketOf('t')} AS b, max(level) AS peak, (array_agg(level ORDER BY t DESC, d DESC))[1] AS last
       FROM run GROUP BY 1`,
    [s.start, s.customerId, new Date(s.start.getTime() - LOOKBACK_MS), s.end, s.end, s.start, s.end, s.start, s.step],
  );
  const peaks = new Map(rows.map((r) => [r.b, r]));
  let level = 0;
  for (let i = 0; i < s.n; i++) {
    const r = peaks.get(i);
    // a bucket without a change holds the level the previous one ended with
    buckets[i]!.concurrent_peak = r ? Math.max(Number(r.peak), level) : level;
    if (r) level = Number(r.last);
  }
}

/** Webhook deliveries and failures (`failed` or `refused`) per bucket. */
async function webhookFigures(s: Scope, buckets: DashboardBucket[]): Promise<void> {
  const { rows } = await s.db.raw<{ rows: { b: number; total: string; failed: string }[] }>(
    `SELECT ${bucketOf('tm_create')} AS b, count(*) AS total, count(*) FILTER (WHERE status IN ('failed', 'refused')) AS failed
       FROM webhook_deliveries
      WHERE customer_id = ? AND tm_create >= ? AND tm_create < ?
      GROUP BY 1`,
    [s.start, s.step, s.customerId, s.start, s.end],
  );
  for (const r of rows) {
    if (!inRange(s, r.b)) continue;
    buckets[r.b]!.webhook_deliveries = Number(r.total);
    buckets[r.b]!.webhook_failures = Number(r.failed);
  }
}

/** The MOS histogram's counts: calls by their lowest MOS, in the bins of MOS_BINS. */
async function mosHistogram(s: Scope): Promise<number[]> {
  const { rows } = await s.db.raw<{ rows: { bin: number; n: string }[] }>(
    `SELECT least(width_bucket(m, ?, ?, ?), ?) AS bin, count(*) AS n
       FROM (SELECT ${MOS_MIN_SQL} AS m FROM calls
              WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ? AND quality IS NOT NULL) q
      WHERE m IS NOT NULL GROUP BY 1`,
    [MOS_BINS[0], MOS_BINS[MOS_BINS.length - 1], MOS_BINS.length - 1, MOS_BINS.length - 1, s.customerId, s.start, s.end],
  );
  const counts = new Array<number>(MOS_BINS.length - 1).fill(0);
  // width_bucket: 0 below the first edge (a MOS under 1 cannot come out of the E-model), i for bin i-1
  for (const r of rows) counts[Math.max(1, r.bin) - 1]! += Number(r.n);
  return counts;
}

/** The range's calls with the lowest MOS, worst first. */
async function worstCalls(s: Scope): Promise<WorstCall[]> {
  const { rows } = await s.db.raw<{ rows: { id: string; tm_create: Date; direction: string; source: { target?: string }; destination: { target?: string }; codec: string | null; m: number }[] }>(
    `SELECT id, tm_create, direction, source, destination, quality->>'codec' AS codec, m FROM (
       SELECT id, tm_create, direction, source, destination, quality, ${MOS_MIN_SQL} AS m FROM calls
        WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ? AND quality IS NOT NULL) q
      WHERE m IS NOT NULL ORDER BY m, tm_create DESC, id LIMIT ?`,
    [s.customerId, s.start, s.end, WORST_CALLS],
  );
  return rows.map((r) => ({
    id: r.id,
    tm_create: r.tm_create.toISOString(),
    direction: r.direction,
    source_target: r.source?.target ?? '',
    destination_target: r.destination?.target ?? '',
    codec: r.codec ?? '',
    mos_min: round(Number(r.m), 2),
  }));
}

/**
 * AI reply time and turn latency per bucket and over the range: each caller message and the message
 * after it in its session (index (aicall_id, tm_create, id)); b is null on the row of the whole range
 * (GROUPING SETS).
 */
async function aiFigures(s: Scope, buckets: DashboardBucket[]): Promise<Pick<Dashboard['totals'], 'ai_reply_ms' | 'ai_latency_ms'>> {
  const { rows } = await s.db.raw<{ rows: AiRow[] }>(
    `SELECT b, count(*) AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
            percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
            count(lat) AS lat_n, ${AI_LATENCY_STAGES.map((st) => `count(${stageSql(st)}) AS ${st}_n, ${PCTS_SQL} WITHIN GROUP (ORDER BY ${stageSql(st)}) AS ${st}`).join(', ')}
       FROM (SELECT ${bucketOf('u.tm_create')} AS b, extract(epoch from (nx.tm_create - u.tm_create)) * 1000 AS ms,
                    CASE WHEN jsonb_typeof(nx.metadata->'latency') = 'object' THEN nx.metadata->'latency' END AS lat
               FROM aimessages u
               JOIN aicalls c ON c.id = u.aicall_id AND c.reference_type = 'call'
               CROSS JOIN LATERAL (
                 SELECT role, tm_create, metadata FROM aimessages m
                  WHERE m.aicall_id = u.aicall_id AND m.tm_delete IS NULL AND m.role IN ('user', 'assistant')
                    AND (m.tm_create, m.id) > (u.tm_create, u.id)
                  ORDER BY m.tm_create, m.id LIMIT 1) nx
              WHERE u.customer_id = ? AND u.role = 'user' AND u.tm_delete IS NULL AND u.tm_create >= ? AND u.tm_create < ?
                AND nx.role = 'assistant') t
      GROUP BY GROUPING SETS ((b), ())`,
    [s.start, s.step, s.customerId, s.start, s.end],
  );
  const totals: Pick<Dashboard['totals'], 'ai_reply_ms' | 'ai_latency_ms'> = { ai_reply_ms: null, ai_latency_ms: null };
  for (const r of rows) {
    const p: Percentiles = { turns: Number(r.n), p50: Math.round(Number(r.p50)), p90: Math.round(Number(r.p90)), p99: Math.round(Number(r.p99)) };
    if (p.turns === 0) continue; // the whole range's row of an empty set
    const lat = aiLatency(r);
    if (r.b === null) {
      totals.ai_reply_ms = p;
      totals.ai_latency_ms = lat;
    } else if (inRange(s, r.b)) {
      buckets[r.b]!.ai_reply_ms = p;
      buckets[r.b]!.ai_latency_ms = lat;
    }
  }
  return totals;
}

/** One row of the AI query: the reply time's percentiles, and per latency stage its count and [p50, p90, p99]. */
type AiRow = { b: number | null; n: string; p50: number; p90: number; p99: number; lat_n: string } & Record<AiLatencyStage, number[] | null> & Record<`${AiLatencyStage}_n`, string>;

const PCTS_SQL = 'percentile_cont(array[0.5, 0.9, 0.99]::float8[])';
/** A stage's ms from the turn's latency object; null when absent or not a number (the stage did not apply). */
function stageSql(stage: AiLatencyStage): string {
  return `CASE WHEN jsonb_typeof(lat->'${stage}_ms') = 'number' THEN (lat->>'${stage}_ms')::float8 END`;
}

function aiLatency(r: AiRow): AiLatency | null {
  const turns = Number(r.lat_n);
  if (!turns) return null;
  const stage = (st: AiLatencyStage): Percentiles | null => {
    const n = Number(r[`${st}_n`]);
    const v = r[st];
    return n && v ? { turns: n, p50: Math.round(Number(v[0])), p90: Math.round(Number(v[1])), p99: Math.round(Number(v[2])) } : null;
  };
  return {
    turns,
    first_rtp: stage('first_rtp'),
    end_of_turn_wait: stage('end_of_turn_wait'),
    stt_final: stage('stt_final'),
    llm_first_token: stage('llm_first_token'),
    tts_first_byte: stage('tts_first_byte'),
  };
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
