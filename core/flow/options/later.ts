/**
 * Options of the actions that reach a subsystem beyond their call (conferences, queues, transcription,
 * external media, AI, messaging, email, conversations, cases), each of which every media-app node
 * runs (core/flow/registry.ts names it per action).
 */
import { z } from 'zod';
import { address, optionalUuid, uuid } from './common';

export const conference_join = z.object({ conference_id: uuid });
export const confbridge_join = z.object({ confbridge_id: uuid });
export const queue_join = z.object({ queue_id: uuid });

const transcribe = z.object({
  language: z.string().optional(),
  provider: z.string().optional(),
  direction: z.enum(['both', 'in', 'out']).optional(),
  on_end_flow_id: optionalUuid,
});
export const transcribe_start = transcribe;
export const transcribe_recording = transcribe;
export const transcribe_stop = z.object({});

export const external_media_start = z.object({
  external_host: z.string().optional(),
  url: z.string().optional(),
  encapsulation: z.string().optional(),
  transport: z.string().optional(),
  transport_data: z.string().optional(),
  connection_type: z.string().optional(),
  format: z.string().optional(),
  direction: z.string().optional(),
  direction_listen: z.string().optional(),
  direction_speak: z.string().optional(),
  data: z.string().optional(),
});
export const external_media_stop = z.object({});

const assistance = {
  assistance_type: z.enum(['ai', 'team']).optional(),
  assistance_id: optionalUuid,
  /** Deprecated: use assistance_type and assistance_id. */
  ai_id: optionalUuid,
};
export const ai_talk = z.object({ ...assistance, duration: z.number().int('must be an integer').min(0).optional() });
export const ai_task = z.object(assistance);
export const ai_summary = z.object({
  on_end_flow_id: optionalUuid,
  reference_type: z.string().optional(),
  reference_id: optionalUuid,
  language: z.string().optional(),
});

export const message_send = z.object({
  source: address.optional(),
  destinations: z.array(address).min(1, 'must contain at least one destination'),
  text: z.string(),
});
export const email_send = z.object({
  destinations: z.array(address).min(1, 'must contain at least one destination'),
  subject: z.string().optional(),
  content: z.string().optional(),
  attachments: z.array(z.object({ reference_type: z.string().optional(), reference_id: optionalUuid })).optional(),
});
export const conversation_send = z.object({ conversation_id: uuid, text: z.string(), sync: z.boolean().optional() });
export const case_create = z.object({
  name: z.string().optional(),
  detail: z.string().optional(),
  note: z.string().optional(),
  sync: z.boolean().optional(),
});

/** Twilio's TwiML (issue 36): a document fetched from `url` (GET or POST) or given inline, compiled and run. */
export const twiml = z.object({ url: z.string().optional(), method: z.enum(['GET', 'POST']).optional(), twiml: z.string().optional() });
