/** Options of the flow-control actions: jumps, conditions, variables, fetching, webhooks. */
import { z } from 'zod';
import { optionalUuid, requiredUuidOrVar, uuid } from './common';
import { VARIABLE_NAME_RE } from '../variables';

export const stop = z.object({});
export const block = z.object({});

export const goto = z.object({
  target_id: uuid,
  loop_count: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
});

export const branch = z.object({
  variable: z.string().optional(),
  default_target_id: optionalUuid,
  target_ids: z.record(z.string(), uuid).optional(),
});

const CONDITIONS = ['==', '!=', '>', '>=', '<', '<='] as const;

export const condition_variable = z.object({
  condition: z.enum(CONDITIONS),
  variable: z.string().min(1, 'must not be empty'),
  value_type: z.enum(['string', 'number', 'length']).optional(),
  value_string: z.string().optional(),
  value_number: z.number().optional(),
  value_length: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  false_target_id: optionalUuid,
});

const wildcard = (min: number, max: number) =>
  z
    .number()
    .int('must be an integer')
    .refine((n) => n === -1 || (n >= min && n <= max), `must be -1 or ${min}-${max}`);

export const condition_datetime = z.object({
  condition: z.enum(CONDITIONS),
  minute: wildcard(0, 59).optional(),
  hour: wildcard(0, 23).optional(),
  /** 0 and -1 both match every day. */
  day: wildcard(0, 31).optional(),
  /** 0 and -1 both match every month (voipbin uses 0). */
  month: wildcard(0, 12).optional(),
  /** 0 = Sunday. */
  weekdays: z.array(z.number().int('must be an integer').min(0, 'must be 0-6').max(6, 'must be 0-6')).optional(),
  false_target_id: optionalUuid,
});

/** Deprecated: use condition_variable. */
export const condition_call_digits = z.object({
  length: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  key: z.string().optional(),
  false_target_id: optionalUuid,
});

/** Deprecated: use condition_variable on svc.call.status. */
export const condition_call_status = z.object({
  status: z.enum(['dialing', 'ringing', 'progressing', 'terminating', 'canceling', 'hangup']),
  false_target_id: optionalUuid,
});

export const variable_set = z.object({
  key: z
    .string()
    .regex(VARIABLE_NAME_RE, 'must be 1-128 characters of letters, digits, _ . - starting with a letter, digit or _')
    .refine((k) => !k.startsWith('svc.'), 'svc. variables are set by the system'),
  value: z.string().optional(),
});

export const fetch = z.object({
  event_url: z.string().regex(/^(https?:\/\/|\$\{)/, 'must be an http or https URL'),
  event_method: z.enum(['GET', 'POST']).optional(),
});

export const fetch_flow = z.object({ flow_id: requiredUuidOrVar });

export const webhook_send = z.object({
  sync: z.boolean().optional(),
  uri: z.string().regex(/^(https?:\/\/|\$\{)/, 'must be an http or https URL'),
  method: z.enum(['POST', 'GET', 'PUT', 'DELETE']).optional(),
  data_type: z.string().optional(),
  data: z.string().optional(),
});

/**
 * Our extension (issue 36): TwiML fetched from url (GET or POST, default POST) or given inline; exactly
 * one of url and twiml. fallback_url (with url only; Twilio's VoiceFallbackUrl / FallbackUrl) is
 * fetched, with ErrorCode and ErrorUrl added, when url's document cannot be fetched or run.
 */
export const twiml = z
  .object({
    url: z.string().optional(),
    method: z.enum(['GET', 'POST']).optional(),
    twiml: z.string().optional(),
    fallback_url: z.string().optional(),
    fallback_method: z.enum(['GET', 'POST']).optional(),
  })
  .refine((o) => (o.url === undefined) !== (o.twiml === undefined), 'must have exactly one of url and twiml')
  .refine((o) => o.url === undefined || /^(https?:\/\/|\$\{)/.test(o.url), { message: 'must be an http or https URL', path: ['url'] })
  .refine((o) => o.fallback_url === undefined || o.url !== undefined, { message: 'is allowed only with url', path: ['fallback_url'] })
  .refine((o) => o.fallback_url === undefined || /^(https?:\/\/|\$\{)/.test(o.fallback_url), { message: 'must be an http or https URL', path: ['fallback_url'] });
