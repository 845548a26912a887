/**
 * The dashboard's response (GET /v1.0/dashboard), declared once in zod: core/calls/dashboard.ts builds
 * a `Dashboard`, control-api/routes/dashboard.ts documents and serves this schema, and the console
 * (web/console/api.ts) imports the types with `import type` (erased from its bundle). This file imports
 * nothing but zod, so the console's type check (`npx tsc --noEmit -p web`) reads it alone
 * (test/architecture/imports.test.ts holds both).
 */
import { z } from 'zod';

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

/** MOS histogram: bins of 0.5 from 1.0 to 4.5 (the E-model's scale); the last bin includes 4.5. */
export const MOS_BINS = [1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5] as const;
export const WORST_CALLS = 10;
/** The stages of `metadata.latency` (docs/ai.md "Turn-taking"), each `<stage>_ms` there. */
export const AI_LATENCY_STAGES = ['first_rtp', 'end_of_turn_wait', 'stt_final', 'llm_first_token', 'tts_first_byte'] as const;
export type AiLatencyStage = (typeof AI_LATENCY_STAGES)[number];

// strict objects: a field the server adds without declaring it here fails the parse in the API test
const num = z.number();
const percentiles = z.strictObject({ turns: num, p50: num, p90: num, p99: num });
const replyMs = percentiles.nullable().describe("AI reply time in ms (voice-agent sessions: a caller's words recorded to the assistant's answer recorded); null without a turn");
const stagePct = percentiles.nullable();
const aiLatency = z.strictObject({
  turns: num.describe('caller turns whose answer carries its latency (aimessages metadata.latency)'),
  first_rtp: stagePct.describe("the caller's speech end to the reply's first audio out"),
  end_of_turn_wait: stagePct.describe('the speech end to the turn judged over'),
  stt_final: stagePct.describe("the speech end to the recogniser's last final"),
  llm_first_token: stagePct.describe('the LLM asked to its first token'),
  tts_first_byte: stagePct.describe('the first sentence handed to the voice to its first audio'),
} satisfies Record<AiLatencyStage | 'turns', z.ZodType>);
const latencyMs = aiLatency.nullable().describe('AI turn latency in ms per stage (voice-agent turns, docs/ai.md "Turn-taking"); a stage null when no turn has it; null without such a turn');
const bucket = z.strictObject({
  t: z.string().describe('bucket start, RFC 3339'),
  calls: num.describe('calls created in the bucket'),
  answered: num.describe('of those, answered (reached progressing)'),
  acd_sec: num.nullable().describe('mean answer-to-hangup seconds of the answered calls that ended; null without one'),
  concurrent_peak: num.describe('most calls in progress at once during the bucket'),
  webhook_deliveries: num,
  webhook_failures: num.describe('deliveries failed (retries exhausted) or refused by the egress policy'),
  ai_reply_ms: replyMs,
  ai_latency_ms: latencyMs,
});
const worstCall = z.strictObject({
  id: z.string(),
  tm_create: z.string(),
  direction: z.string(),
  source_target: z.string(),
  destination_target: z.string(),
  codec: z.string(),
  mos_min: num,
});

export const dashboardResponse = z.strictObject({
  range: z.enum(DASHBOARD_RANGE_NAMES),
  start: z.string(),
  end: z.string(),
  bucket_sec: num,
  buckets: z.array(bucket),
  totals: z.strictObject({
    calls: num,
    answered: num,
    asr: num.nullable().describe('answer-seizure ratio, answered / calls (0..1); null without calls'),
    acd_sec: num.nullable(),
    concurrent_peak: num,
    mos_avg: num.nullable().describe("mean of the calls' lowest MOS"),
    webhook_deliveries: num,
    webhook_failures: num,
    ai_reply_ms: replyMs,
    ai_latency_ms: latencyMs,
  }),
  mos_histogram: z
    .strictObject({ edges: z.array(num), counts: z.array(num) })
    .describe('calls by their lowest MOS (either direction): counts[i] in [edges[i], edges[i+1]), the last bin including 4.5'),
  worst_calls: z.array(worstCall).describe(`up to ${WORST_CALLS} calls of the range with the lowest MOS, worst first`),
});

export type Dashboard = z.infer<typeof dashboardResponse>;
export type DashboardBucket = z.infer<typeof bucket>;
export type Percentiles = z.infer<typeof percentiles>;
export type AiLatency = z.infer<typeof aiLatency>;
export type WorstCall = z.infer<typeof worstCall>;
