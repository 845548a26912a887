/**
 * Options of the actions that reach a subsystem beyond their call (conferences, queues, transcription,
 * external media, AI, messaging, email, conversations, cases), each of which every media-app node
 * runs (core/flow/registry.ts names it per action).
 */
import { z } from 'zod';
import { TWILIO_TRACKS } from '../../streams/twilio';
import { address, optionalUuid, uuid } from './common';
import { conferenceRecord } from './twiml-recording';

/** The longest conference name a join may give (Twilio's friendly names are at most 128 characters). */
export const CONFERENCE_NAME_MAX = 128;
/** The longest queue name (Twilio's queue FriendlyName: 64 characters). */
export const QUEUE_NAME_MAX = 64;

/**
 * How a participant enters (our extension, for TwiML <Conference startConferenceOnEnter waitUrl>):
 * `start_on_enter: false` waits out of the mix until a participant without it has entered; meanwhile
 * `wait_url` (absent: the node's music on hold; '': silence; else a TwiML document of Play, Say,
 * Pause and Redirect, or an audio file, fetched with `wait_method` and played in a loop).
 */
const conferenceWait = {
  start_on_enter: z.boolean().optional(),
  wait_url: z
    .string()
    .regex(/^(https?:\/\/.+)?$/, "must be an http or https URL or ''")
    .optional(),
  wait_method: z.enum(['GET', 'POST']).optional(),
};

/** The conference status callback events this platform sends (TwiML statusCallbackEvent's words). */
export const CONFERENCE_CALLBACK_EVENTS = ['start', 'end', 'join', 'leave', 'mute', 'hold', 'speaker', 'modify', 'announcement'] as const;

/**
 * A conference by id, or by `name` (our extension, for TwiML <Dial><Conference>name): the customer's
 * live conference of that name, made on the first join (it then ends when its last participant
 * leaves; `max_participants` applies to the room so made). `muted`, `end_on_exit` and `label` are how
 * this participant joins.
 */
export const conference_join = z
  .object({
    conference_id: uuid.optional(),
    name: z.string().min(1, 'must not be empty').max(CONFERENCE_NAME_MAX, `at most ${CONFERENCE_NAME_MAX} characters`).optional(),
    max_participants: z.number().int('must be an integer').min(2, 'must be from 2 to 250').max(250, 'must be from 2 to 250').optional(),
    muted: z.boolean().optional(),
    end_on_exit: z.boolean().optional(),
    label: z.string().max(128, 'at most 128 characters').optional(),
    /** Our extension (TwiML beep): a tone into the room when this participant joins and/or leaves. */
    beep: z.enum(['true', 'false', 'onEnter', 'onExit']).optional(),
    /** Our extension (TwiML coach): the call id this participant coaches; only that participant hears it. */
    coach_call_id: uuid.optional(),
    ...conferenceWait,
    /** Our extension (TwiML statusCallback*): the room's Twilio status callbacks, the first participant's that gives one. */
    status_callback: z
      .object({
        url: z.string().regex(/^https?:\/\//, 'must be an http or https URL'),
        method: z.enum(['GET', 'POST']),
        events: z.array(z.enum(CONFERENCE_CALLBACK_EVENTS)).min(1, 'must name at least one event'),
      })
      .optional(),
    /** Our extension (TwiML record="record-from-start"): the room is recorded from its start (twiml-recording.ts). */
    record: conferenceRecord.optional(),
  })
  .refine((o) => (o.conference_id === undefined) !== (o.name === undefined), 'must have exactly one of conference_id and name');
/** confbridge_join with `start_on_enter: false` waits, hearing its wait audio, until the room has started. */
export const confbridge_join = z.object({ confbridge_id: uuid, ...conferenceWait });
/** A queue by id, or by `name` (our extension, for TwiML <Enqueue>name): the customer's queue of that name, made on first use. */
export const queue_join = z
  .object({
    queue_id: uuid.optional(),
    name: z.string().min(1, 'must not be empty').max(QUEUE_NAME_MAX, `at most ${QUEUE_NAME_MAX} characters`).optional(),
    /** Our extension (TwiML <Enqueue waitUrl>): a TwiML wait document (or .wav/.mp3) played in a loop while the caller waits. */
    wait_url: z
      .string()
      .regex(/^https?:\/\/.+/, 'must be an http or https URL')
      .optional(),
    wait_method: z.enum(['GET', 'POST']).optional(),
  })
  .refine((o) => (o.queue_id === undefined) !== (o.name === undefined), 'must have exactly one of queue_id and name');
/**
 * Our extension (TwiML <Dial><Queue>): the caller takes the oldest waiting caller of the queue on this
 * node (by queue_id, or by name: the customer's queue of that name, made on first use), waiting up to
 * `timeout` ms for one; with `url` that caller hears this TwiML document (Play, Say, Pause, Redirect)
 * once, fetched with `method`, before the two are bridged.
 */
export const queue_dequeue = z
  .object({
    queue_id: uuid.optional(),
    name: z.string().min(1, 'must not be empty').max(QUEUE_NAME_MAX, `at most ${QUEUE_NAME_MAX} characters`).optional(),
    url: z
      .string()
      .regex(/^https?:\/\/.+/, 'must be an http or https URL')
      .optional(),
    method: z.enum(['GET', 'POST']).optional(),
    timeout: z.number().int('must be an integer').min(1000, 'must be >= 1000').max(600_000, 'must be <= 600000').optional(),
  })
  .refine((o) => (o.queue_id === undefined) !== (o.name === undefined), 'must have exactly one of queue_id and name');
/** Our extension (docs/pbx.md "Park"): parks the call in `slot` or the first free slot of its customer. */
export const park = z.object({ slot: z.number().int().min(1).max(999_999).optional() });

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
  /** Encapsulation `twilio` (Twilio Media Streams, docs/media-streams.md): the stream's name... */
  name: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters').optional(),
  /** ...which audio it carries (inbound_track when omitted; a `wait` stream is always inbound)... */
  twilio_track: z.enum(TWILIO_TRACKS).optional(),
  /** ...the `start` message's customParameters... */
  twilio_parameters: z.record(z.string(), z.string().max(4096, 'at most 4096 characters')).optional(),
  /** ...where stream-started/stopped/error are reported... */
  status_callback: z.string().max(2048, 'at most 2048 characters').optional(),
  status_callback_method: z.enum(['GET', 'POST']).optional(),
  /** ...and true for `<Connect><Stream>`: bidirectional, and the action lasts as long as the stream. */
  wait: z.boolean().optional(),
});
/** Without a name, every stream of the call stops. */
export const external_media_stop = z.object({ name: z.string().min(1, 'must not be empty').optional() });

const assistance = {
  assistance_type: z.enum(['ai', 'team']).optional(),
  assistance_id: optionalUuid,
  /** Deprecated: use assistance_type and assistance_id. */
  ai_id: optionalUuid,
};
export const ai_talk = z.object({
  ...assistance,
  duration: z.number().int('must be an integer').min(0).optional(),
  /** Runs this version of the AI (GET /ais/{id}/versions), not its latest; the flow is refused when it has none. */
  ai_version: z.number().int('must be an integer').min(1, 'versions start at 1').optional(),
});
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
