/** Request pieces and response schemas of /campaigns, /campaigncalls, /outdials and /outplans. */
import { z } from 'zod';
import { text } from '../route';
import { addressSchema, legacyTime, uuidOut } from '../routes/schemas';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent, type EventType, type ResourcePayload } from '../../core/events/catalogue';
import { isE164 } from '../../core/numbers/e164';
import { HHMM, OUTCOMES, WEEKDAYS, isTimeZone, minutesOf } from '../../core/campaigns/dialplan';
import type { AppContext } from '../context';

/** An address a campaign can dial (the types POST /calls dials). */
export const dialAddress = z
  .strictObject({
    type: z.enum(['tel', 'sip', 'extension', 'agent']),
    target: z.string().trim().min(1).max(1024),
    target_name: text().optional(),
    name: text().optional(),
    detail: text(1024).optional(),
  })
  .refine((a) => a.type !== 'tel' || isE164(a.target), { message: 'a tel target must be an E.164 number', path: ['target'] });

/** A source address (outplan.source): any address type, like POST /calls' source. */
export const sourceAddress = z.strictObject({
  type: z.enum(['', 'agent', 'conference', 'email', 'extension', 'line', 'sip', 'tel', 'web_session']),
  target: text(1024),
  target_name: text().optional(),
  name: text().optional(),
  detail: text(1024).optional(),
});

/** A dialling window: days and local start/end times ("HH:MM", end may be "24:00", start before end). */
export const dialWindow = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1).max(7),
    start: z.string().regex(HHMM, 'must be HH:MM'),
    end: z.string().regex(HHMM, 'must be HH:MM'),
  })
  .refine((w) => minutesOf(w.start) < minutesOf(w.end), { message: 'start must be before end (split a window that spans midnight in two)', path: ['end'] });

export const timeZone = z.string().max(64).refine(isTimeZone, 'must be an IANA time zone such as Europe/Paris or UTC');

export const outplanSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  source: addressSchema,
  dial_timeout: z.number().int().describe('milliseconds'),
  try_interval: z.number().int().describe('milliseconds'),
  max_try_count_0: z.number().int(),
  max_try_count_1: z.number().int(),
  max_try_count_2: z.number().int(),
  max_try_count_3: z.number().int(),
  max_try_count_4: z.number().int(),
  timezone: z.string().describe('IANA time zone of dial_windows'),
  dial_windows: z.array(z.object({ days: z.array(z.enum(WEEKDAYS)), start: z.string(), end: z.string() })).describe('when dialling is allowed; empty = any time'),
  try_interval_busy: z.number().int().nullable().describe('milliseconds; null = try_interval'),
  try_interval_noanswer: z.number().int().nullable().describe('milliseconds; null = try_interval'),
  try_interval_failed: z.number().int().nullable().describe('milliseconds; null = try_interval'),
  try_interval_machine: z.number().int().nullable().describe('milliseconds; null = try_interval'),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const outdialSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  campaign_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  data: z.string(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const maybeAddress = addressSchema.nullable();
export const outdialtargetSchema = z.object({
  id: uuidOut(),
  outdial_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  data: z.string(),
  status: z.enum(['idle', 'progressing', 'done']),
  destination_0: maybeAddress,
  destination_1: maybeAddress,
  destination_2: maybeAddress,
  destination_3: maybeAddress,
  destination_4: maybeAddress,
  try_count_0: z.number().int(),
  try_count_1: z.number().int(),
  try_count_2: z.number().int(),
  try_count_3: z.number().int(),
  try_count_4: z.number().int(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const campaignSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.enum(['call', 'flow']),
  name: z.string(),
  detail: z.string(),
  status: z.enum(['stop', 'stopping', 'run']),
  service_level: z.number().int().describe('without a queue: most campaign calls live at once; with a queue: % of its available agents'),
  end_handle: z.enum(['stop', 'continue']),
  actions: z.array(z.unknown()),
  outplan_id: uuidOut(),
  outdial_id: uuidOut(),
  queue_id: uuidOut(),
  next_campaign_id: uuidOut(),
  amd: z.record(z.string(), z.unknown()).nullable().describe('the amd action options every attempt is placed with; null = off'),
  dial_rate: z.number().int().describe('attempts started per minute at most; 0 = no limit'),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const campaigncallSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  campaign_id: uuidOut(),
  outplan_id: uuidOut(),
  outdial_id: uuidOut(),
  outdial_target_id: uuidOut(),
  queue_id: uuidOut(),
  activeflow_id: uuidOut(),
  flow_id: uuidOut(),
  reference_type: z.enum(['none', 'call', 'flow']),
  reference_id: uuidOut(),
  status: z.enum(['dialing', 'progressing', 'done']),
  result: z.enum(['', 'success', 'fail']),
  source: addressSchema,
  destination: addressSchema,
  destination_index: z.number().int(),
  try_count: z.number().int(),
  result_reason: z.enum(OUTCOMES).describe('what the attempt ended with'),
  amd_result: z.enum(['', 'human', 'machine', 'notsure']).describe('the AMD verdict when the campaign dials with amd'),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

/** Publishes after the write; a Redis failure is logged, never fails the request that already wrote. */
export async function publish(ctx: AppContext, type: EventType, payload: ResourcePayload): Promise<void> {
  try {
    await publishResourceEvent(eventPublisher(ctx), type, payload);
  } catch (err) {
    ctx.logger.warn({ err: String(err) }, `could not publish ${type}`);
  }
}

/** The fields a partial body sets (zod leaves absent optionals as undefined keys). */
export function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}
