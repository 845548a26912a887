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
 */
import type { Db } from '../db/knex';

/** The ranges offered, each with its bucket width (every range has 60 to 120 buckets). */
export const DASHBOARD_RANGES = {
  '1h': { rangeMs: 3_600_000, stepMs: 60_000 },
  '6h': { rangeMs: 6 * 3_600_000, stepMs: 5 * 60_000 },
  '24h': { rangeMs: 24 * 3_600_000, stepMs: 15 * 60_000 },
  '7d': { rangeMs: 7 * 86_400_000, stepMs: 2 * 3_600_000 },
  '30d': { rangeMs: 30 * 86_400_000, stepMs: 6 * 3_600_000 },
} as const;
export type DashboardRange = keyof typeof DASHBOARD_RANGES;
export const DASHBOARD_RANGE_NAMES = Object.keys(DASHBOARD_RANGES) as [DashboardRange, ...DashboardRange[]];

/** How far before the range a call's creation may lie and still count as concurrent. */
export const LOOKBACK_MS = 86_400_000;
/** MOS histogram: bins of 0.5 from 1.0 to 4.5 (the E-model's scale); the last bin includes 4.5. */
export const MOS_BINS = [1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5] as const;
export const WORST_CALLS = 10;

export interface DashboardBucket {
  /** The bucket's start, RFC 3339. */
  t: string;
  calls: number;
  answered: number;
  /** Mean answered-call duration in seconds; null without an ended answered call. */
  acd_sec: number | null;
  concurrent_peak: number;
  webhook_deliveries: number;
  webhook_failures: number;
  /** AI reply time percentiles in ms; null without a voice-agent turn in the bucket. */
  ai_reply_ms: Percentiles | null;
  /** AI turn latency per stage in ms; null without a turn whose answer carries its latency. */
  ai_latency_ms: AiLatency | null;
}

/** The stages of `metadata.latency` (docs/ai.md "Turn-taking"), each `<stage>_ms` there. */
export const AI_LATENCY_STAGES = ['first_rtp', 'end_of_turn_wait', 'stt_final', 'llm_first_token', 'tts_first_byte'] as const;
export type AiLatencyStage = (typeof AI_LATENCY_STAGES)[number];
/** `turns`: caller turns whose answer carries a latency; per stage its percentiles (null when no turn has it). */
export type AiLatency = { turns: number } & Record<AiLatencyStage, Percentiles | null>;

export interface Percentiles {
  turns: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface WorstCall {
  id: string;
  tm_create: string;
  direction: string;
  source_target: string;
  destination_target: string;
  codec: string;
  mos_min: number;
}

export interface Dashboard {
  range: DashboardRange;
  start: string;
  end: string;
  bucket_sec: number;
  buckets: DashboardBucket[];
  totals: {
    calls: number;
    answered: number;
    asr: number | null;
    acd_sec: number | null;
    concurrent_peak: number;
    mos_avg: number | null;
    webhook_deliveries: number;
    webhook_failures: number;
    ai_reply_ms: Percentiles | null;
    ai_latency_ms: AiLatency | null;
  };
  /** `counts[i]` calls whose lowest MOS is in [edges[i], edges[i+1]). */
  mos_histogram: { edges: number[]; counts: number[] };
  worst_calls: WorstCall[];
}

/** The range's end rounded up to a bucket boundary (so buckets stay put as time passes), and its start. */
export function dashboardWindow(range: DashboardRange, now: Date): { start: Date; end: Date; stepMs: number } {
  const { rangeMs, stepMs } = DASHBOARD_RANGES[range];
  const end = Math.floor(now.getTime() / stepMs) * stepMs + stepMs;
  return { start: new Date(end - rangeMs), end: new Date(end), stepMs };
}

const MOS_MIN_SQL = `least((quality->'in'->>'mos_min')::float8, (quality->'out'->>'mos_min')::float8)`;

export async function dashboard(db: Db, customerId: string, range: DashboardRange, now: Date): Promise<Dashboard> {
  const { start, end, stepMs } = dashboardWindow(range, now);
  const q: Query = { db, customerId, start, end, step: stepMs / 1000 };
  const n = Math.round((end.getTime() - start.getTime()) / stepMs);
  const [callRows, peakRows, hookRows, mosRows, worstRows, aiRows] = await Promise.all([callsByBucket(q), peaksByBucket(q), hooksByBucket(q), mosBins(q), worstCalls(q), aiTurns(q)]);
  const buckets: DashboardBucket[] = Array.from({ length: n }, (_, i) => ({
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
  const { acdSum, acdN, mosSum, mosN } = foldCalls(buckets, callRows);
  foldPeaks(buckets, peakRows);
  foldHooks(buckets, hookRows);
  const ai = foldAi(buckets, aiRows);
  const counts = new Array<number>(MOS_BINS.length - 1).fill(0);
  // width_bucket: 0 below the first edge (a MOS under 1 cannot come out of the E-model), i for bin i-1
  for (const r of mosRows) counts[Math.max(1, r.bin) - 1]! += Number(r.n);

  const sum = (k: 'calls' | 'answered' | 'webhook_deliveries' | 'webhook_failures') => buckets.reduce((s, b) => s + b[k], 0);
  const calls = sum('calls');
  const answered = sum('answered');
  return {
    range,
    start: start.toISOString(),
    end: end.toISOString(),
    bucket_sec: q.step,
    buckets,
    totals: {
      calls,
      answered,
      asr: calls ? round(answered / calls, 4) : null,
      acd_sec: acdN ? round(acdSum / acdN, 1) : null,
      concurrent_peak: buckets.reduce((m, b) => Math.max(m, b.concurrent_peak), 0),
      mos_avg: mosN ? round(mosSum / mosN, 2) : null,
      webhook_deliveries: sum('webhook_deliveries'),
      webhook_failures: sum('webhook_failures'),
      ai_reply_ms: ai.reply,
      ai_latency_ms: ai.latency,
    },
    mos_histogram: { edges: [...MOS_BINS], counts },
    worst_calls: worstRows.map((r) => ({
      id: r.id,
      tm_create: r.tm_create.toISOString(),
      direction: r.direction,
      source_target: r.source?.target ?? '',
      destination_target: r.destination?.target ?? '',
      codec: r.codec ?? '',
      mos_min: round(Number(r.m), 2),
    })),
  };
}

/** What every query of the dashboard reads: one customer's rows in [start, end), bucketed by `step` seconds. */
interface Query {
  db: Db;
  customerId: string;
  start: Date;
  end: Date;
  step: number;
}

/** The bucket index of a timestamp column; binds the range's start and the step, in that order. */
const bucketOf = (col: string) => `floor(extract(epoch from (${col} - ?::timestamptz)) / ?)::int`;

type CallBucketRow = { b: number; calls: string; answered: string; acd: number | null; ended: string; mos_sum: number | null; mos_n: string };
async function callsByBucket({ db, customerId, start, end, step }: Query): Promise<CallBucketRow[]> {
  const r = await db.raw<{ rows: CallBucketRow[] }>(
    `SELECT ${bucketOf('tm_create')} AS b, count(*) AS calls, count(tm_progressing) AS answered,
            avg(extract(epoch from (tm_hangup - tm_progressing))) FILTER (WHERE tm_progressing IS NOT NULL AND tm_hangup IS NOT NULL) AS acd,
            count(*) FILTER (WHERE tm_progressing IS NOT NULL AND tm_hangup IS NOT NULL) AS ended,
            sum(${MOS_MIN_SQL}) AS mos_sum, count(${MOS_MIN_SQL}) AS mos_n
       FROM calls
      WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ?
      GROUP BY 1`,
    [start, step, customerId, start, end],
  );
  return r.rows;
}

// +1 at answer (or the range's start), -1 at hangup; a running sum in time order; per bucket the
// highest level reached and the level it ends with (carried into the buckets without a change).
type PeakRow = { b: number; peak: string; last: string };
async function peaksByBucket({ db, customerId, start, end, step }: Query): Promise<PeakRow[]> {
  const r = await db.raw<{ rows: PeakRow[] }>(
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
    [start, customerId, new Date(start.getTime() - LOOKBACK_MS), end, end, start, end, start, step],
  );
  return r.rows;
}

type HookRow = { b: number; total: string; failed: string };
async function hooksByBucket({ db, customerId, start, end, step }: Query): Promise<HookRow[]> {
  const r = await db.raw<{ rows: HookRow[] }>(
    `SELECT ${bucketOf('tm_create')} AS b, count(*) AS total, count(*) FILTER (WHERE status IN ('failed', 'refused')) AS failed
       FROM webhook_deliveries
      WHERE customer_id = ? AND tm_create >= ? AND tm_create < ?
      GROUP BY 1`,
    [start, step, customerId, start, end],
  );
  return r.rows;
}

async function mosBins({ db, customerId, start, end }: Query): Promise<{ bin: number; n: string }[]> {
  const r = await db.raw<{ rows: { bin: number; n: string }[] }>(
    `SELECT least(width_bucket(m, ?, ?, ?), ?) AS bin, count(*) AS n
       FROM (SELECT ${MOS_MIN_SQL} AS m FROM calls
              WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ? AND quality IS NOT NULL) q
      WHERE m IS NOT NULL GROUP BY 1`,
    [MOS_BINS[0], MOS_BINS[MOS_BINS.length - 1], MOS_BINS.length - 1, MOS_BINS.length - 1, customerId, start, end],
  );
  return r.rows;
}

type WorstRow = { id: string; tm_create: Date; direction: string; source: { target?: string }; destination: { target?: string }; codec: string | null; m: number };
async function worstCalls({ db, customerId, start, end }: Query): Promise<WorstRow[]> {
  const r = await db.raw<{ rows: WorstRow[] }>(
    `SELECT id, tm_create, direction, source, destination, quality->>'codec' AS codec, m FROM (
       SELECT id, tm_create, direction, source, destination, quality, ${MOS_MIN_SQL} AS m FROM calls
        WHERE customer_id = ? AND tm_delete IS NULL AND tm_create >= ? AND tm_create < ? AND quality IS NOT NULL) q
      WHERE m IS NOT NULL ORDER BY m, tm_create DESC, id LIMIT ?`,
    [customerId, start, end, WORST_CALLS],
  );
  return r.rows;
}

// each caller message and the message after it in its session (index (aicall_id, tm_create, id));
// b is null on the row of the whole range (GROUPING SETS)
async function aiTurns({ db, customerId, start, end, step }: Query): Promise<AiRow[]> {
  const r = await db.raw<{ rows: AiRow[] }>(
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
    [start, step, customerId, start, end],
  );
  return r.rows;
}

/** Fills each bucket's calls, answered and ACD; the sums behind the range's ACD and mean MOS. */
function foldCalls(buckets: DashboardBucket[], rows: CallBucketRow[]): { acdSum: number; acdN: number; mosSum: number; mosN: number } {
  const t = { acdSum: 0, acdN: 0, mosSum: 0, mosN: 0 };
  for (const r of rows) {
    if (!(r.b >= 0 && r.b < buckets.length)) continue;
    const bucket = buckets[r.b]!;
    bucket.calls = Number(r.calls);
    bucket.answered = Number(r.answered);
    bucket.acd_sec = r.acd === null ? null : round(Number(r.acd), 1);
    if (r.acd !== null) {
      t.acdSum += Number(r.acd) * Number(r.ended);
      t.acdN += Number(r.ended);
    }
    if (r.mos_sum !== null) {
      t.mosSum += Number(r.mos_sum);
      t.mosN += Number(r.mos_n);
    }
  }
  return t;
}

function foldPeaks(buckets: DashboardBucket[], rows: PeakRow[]): void {
  const peaks = new Map(rows.map((r) => [r.b, r]));
  let level = 0;
  for (let i = 0; i < buckets.length; i++) {
    const r = peaks.get(i);
    // a bucket without a change holds the level the previous one ended with
    buckets[i]!.concurrent_peak = r ? Math.max(Number(r.peak), level) : level;
    if (r) level = Number(r.last);
  }
}

function foldHooks(buckets: DashboardBucket[], rows: HookRow[]): void {
  for (const r of rows) {
    if (!(r.b >= 0 && r.b < buckets.length)) continue;
    buckets[r.b]!.webhook_deliveries = Number(r.total);
    buckets[r.b]!.webhook_failures = Number(r.failed);
  }
}

/** Fills each bucket's AI figures; the whole range's (the row without a bucket). */
function foldAi(buckets: DashboardBucket[], rows: AiRow[]): { reply: Percentiles | null; latency: AiLatency | null } {
  const total: { reply: Percentiles | null; latency: AiLatency | null } = { reply: null, latency: null };
  for (const r of rows) {
    const p: Percentiles = { turns: Number(r.n), p50: Math.round(Number(r.p50)), p90: Math.round(Number(r.p90)), p99: Math.round(Number(r.p99)) };
    if (p.turns === 0) continue; // the whole range's row of an empty set
    const lat = aiLatency(r);
    if (r.b === null) {
      total.reply = p;
      total.latency = lat;
    } else if (r.b >= 0 && r.b < buckets.length) {
      buckets[r.b]!.ai_reply_ms = p;
      buckets[r.b]!.ai_latency_ms = lat;
    }
  }
  return total;
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
