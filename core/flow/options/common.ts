/** Zod building blocks shared by the option schemas. */
import { z } from 'zod';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HAS_VAR = /\$\{[^}]*\}/;

/** A literal UUID (the empty UUID included: it means unset). */
export const uuid = z.string().regex(UUID_RE, 'must be a UUID');

/** An optional reference: absent, "", or a UUID. */
export const optionalUuid = z.union([z.literal(''), uuid]).optional();

/** A UUID, or a string filled in at run time from a `${var}`. */
export const uuidOrVar = z
  .string()
  .refine((s) => s === '' || UUID_RE.test(s) || HAS_VAR.test(s), 'must be a UUID or contain a ${variable}')
  .optional();

/** A required UUID, or a `${var}` filled in at run time. */
export const requiredUuidOrVar = z.string().refine((s) => UUID_RE.test(s) || HAS_VAR.test(s), 'must be a UUID or contain a ${variable}');

/**
 * Audio a flow plays: an http(s) URL, or a `${var}` that must turn into one at run time. Never a
 * path: a path would read the server's disk (other customers' recordings included).
 */
export const mediaUrl = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => isMediaUrl(s) || HAS_VAR.test(s), 'must be an http or https URL');

export function isMediaUrl(s: string): boolean {
  return /^https?:\/\/[^\s/]+/i.test(s);
}

/**
 * What a held party of a bridge (the connect action) hears (docs/pbx.md "Music on hold"): 'default' (as absent) the
 * customer's moh_url, else the platform's music; 'none' no music from the platform; {url} that WAV or
 * MP3 (http or https, `${var}` allowed), fetched by the media engine through the egress policy.
 */
export const holdMusic = z.union([z.enum(['default', 'none']), z.strictObject({ url: mediaUrl.max(2048, 'at most 2048 characters') })], {
  error: 'must be "default", "none" or {"url": "<an http or https URL of WAV or MP3 audio>"}',
});

export type HoldMusicOption = z.infer<typeof holdMusic>;

/** Milliseconds, non-negative integer. */
export const millis = z.number().int('must be an integer').min(0, 'must be >= 0');

/** Address (reference schema CommonAddress): type, target, target_name, name, detail. */
export const ADDRESS_TYPES = ['', 'agent', 'ai', 'ai_team', 'conference', 'email', 'extension', 'line', 'sip', 'tel', 'webchat', 'web_session', 'whatsapp'] as const;
export const address = z.object({
  type: z.enum(ADDRESS_TYPES).optional(),
  target: z.string().optional(),
  target_name: z.string().optional(),
  name: z.string().optional(),
  detail: z.string().optional(),
});

/** Options of types that take none: any object is accepted and nothing is kept. */
export const none = z.object({});

export const anonymous = z.enum(['yes', 'no', 'auto']).optional();

/** Call hangup reasons (reference schema CallManagerCallHangupReason). */
export const HANGUP_REASONS = ['', 'normal', 'failed', 'busy', 'cancel', 'timeout', 'noanswer', 'dialout', 'amd'] as const;
