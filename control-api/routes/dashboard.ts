/**
 * GET /dashboard (our extension, docs/observability.md "Dashboard"): the caller's call volume,
 * concurrency, answer-seizure ratio, average call duration, MOS distribution with the worst calls,
 * and webhook delivery failures over a range, in fixed buckets (core/calls/dashboard.ts). The
 * console's dashboard page draws it.
 */
import { z } from 'zod';
import { defineRoute } from '../route';
import { invalidParameter } from '../../core/errors';
import { realDate } from './calls-export';
import { DASHBOARD_RANGES, DASHBOARD_RANGE_NAMES, MOS_BINS, WORST_CALLS, dashboard } from '../../core/calls/dashboard';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

const num = z.number();
const percentiles = z
  .object({ turns: num, p50: num, p90: num, p99: num })
  .nullable()
  .describe("AI reply time in ms (voice-agent sessions: a caller's words recorded to the assistant's answer recorded); null without a turn");
const stagePct = z.object({ turns: num, p50: num, p90: num, p99: num }).nullable();
const aiLatency = z
  .object({
    turns: num.describe('caller turns whose answer carries its latency (aimessages metadata.latency)'),
    first_rtp: stagePct.describe("the caller's speech end to the reply's first audio out"),
    end_of_turn_wait: stagePct.describe('the speech end to the turn judged over'),
    stt_final: stagePct.describe("the speech end to the recogniser's last final"),
    llm_first_token: stagePct.describe('the LLM asked to its first token'),
    tts_first_byte: stagePct.describe('the first sentence handed to the voice to its first audio'),
  })
  .nullable()
  .describe('AI turn latency in ms per stage (voice-agent turns, docs/ai.md "Turn-taking"); a stage null when no turn has it; null without such a turn');
const bucket = z.object({
  t: z.string().describe('bucket start, RFC 3339'),
  calls: num.describe('calls created in the bucket'),
  answered: num.describe('of those, answered (reached progressing)'),
  acd_sec: num.nullable().describe('mean answer-to-hangup seconds of the answered calls that ended'),
  concurrent_peak: num.describe('most calls in progress at once during the bucket'),
  webhook_deliveries: num,
  webhook_failures: num.describe('deliveries failed (retries exhausted) or refused by the egress policy'),
  ai_reply_ms: percentiles,
  ai_latency_ms: aiLatency,
});
const response = z.object({
  range: z.enum(DASHBOARD_RANGE_NAMES),
  start: z.string(),
  end: z.string(),
  bucket_sec: num,
  buckets: z.array(bucket),
  totals: z.object({
    calls: num,
    answered: num,
    asr: num.nullable().describe('answer-seizure ratio, answered / calls (0..1); null without calls'),
    acd_sec: num.nullable(),
    concurrent_peak: num,
    mos_avg: num.nullable().describe("mean of the calls' lowest MOS"),
    webhook_deliveries: num,
    webhook_failures: num,
    ai_reply_ms: percentiles,
    ai_latency_ms: aiLatency,
  }),
  mos_histogram: z.object({ edges: z.array(num), counts: z.array(num) }).describe('calls by their lowest MOS (either direction): counts[i] in [edges[i], edges[i+1]), the last bin including 4.5'),
  worst_calls: z
    .array(z.object({ id: z.string(), tm_create: z.string(), direction: z.string(), source_target: z.string(), destination_target: z.string(), codec: z.string(), mos_min: num }))
    .describe(`up to ${WORST_CALLS} calls of the range with the lowest MOS, worst first`),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/dashboard',
    tag: 'Call',
    summary: 'Call, AI and webhook figures over a range, bucketed (the console dashboard)',
    description:
      `Our extension. range: ${Object.entries(DASHBOARD_RANGES)
        .map(([k, v]) => `${k} (buckets of ${v.stepMs / 60_000} min)`)
        .join(', ')}. The range ends at the bucket boundary after \`end\` (default now). ` + `MOS bins: ${MOS_BINS.join(', ')}. Only the caller's customer; soft-deleted calls are left out.`,
    permission: 'manager',
    query: z.object({
      range: z.enum(DASHBOARD_RANGE_NAMES).optional().describe('default 24h'),
      end: z.string().max(40).regex(ISO_INSTANT, 'must be an ISO 8601 date-time with Z or an offset').optional().describe('the moment the range ends (default now)'),
    }),
    response,
    handler: async ({ ctx, auth, query }) => {
      const end = query.end === undefined ? new Date() : new Date(query.end);
      if (query.end !== undefined && !realDate(query.end)) throw invalidParameter('end', 'end is not a real date-time');
      return dashboard(ctx.db, auth.customerId, query.range ?? '24h', end);
    },
  }),
];
