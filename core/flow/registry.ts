/**
 * The action type registry: for every type, its option schema, whether it needs a live call, the
 * subsystem beyond the call that runs it (if any), and where its jump targets are.
 */
import type { z } from 'zod';
import { ACTION_TYPES, type ActionType, isUnset } from './action';
import * as media from './options/media';
import * as control from './options/control';
import * as dialing from './options/dialing';
import * as later from './options/later';
import * as voicemail from './options/voicemail';
import * as speech from './options/speech';
import * as twimlRecording from './options/twiml-recording';
import * as sipRefer from './options/sip-refer';
import * as conversationRelay from './options/conversation-relay';

export interface ActionSpec {
  type: ActionType;
  schema: z.ZodType<Record<string, unknown>>;
  /** Acts on the call's media: skipped when the activeflow has no call (voipbin verifyActionType). */
  needsCall: boolean;
  /** The subsystem the action needs beyond its call; where it is not running (the flow simulator, a test), the runner ends the activeflow with an error naming it. */
  subsystem?: string;
  deprecated?: boolean;
}

/** A reference from an option to another action of the same flow. */
export interface TargetRef {
  field: string;
  id: string;
}

const SCHEMAS: Record<ActionType, z.ZodType<Record<string, unknown>>> = {
  ...media,
  ...control,
  ...dialing,
  ...later,
  ...voicemail,
  ...speech,
  ...twimlRecording,
  ...sipRefer,
  ...conversationRelay,
} as Record<ActionType, z.ZodType<Record<string, unknown>>>;

const NEEDS_CALL = new Set<ActionType>([
  'answer',
  'beep',
  'talk',
  'play',
  'digits_receive',
  'digits_send',
  'echo',
  'stream_echo',
  'hangup',
  'mute',
  'recording_start',
  'recording_stop',
  'amd',
  'connect',
  'conference_join',
  'confbridge_join',
  'queue_join',
  'queue_dequeue',
  'park',
  'external_media_start',
  'external_media_stop',
  'transcribe_start',
  'transcribe_stop',
  'ai_talk',
  'condition_call_status',
  'twiml',
  'speech_gather',
  'twiml_recording',
  'sip_refer',
  'conversation_relay',
  'voicemail',
  'voicemail_main',
]);

const SUBSYSTEM: Partial<Record<ActionType, string>> = {
  conference_join: 'conference',
  confbridge_join: 'conference',
  queue_join: 'queue',
  queue_dequeue: 'queue',
  park: 'pbx',
  transcribe_start: 'transcribe',
  transcribe_stop: 'transcribe',
  transcribe_recording: 'transcribe',
  external_media_start: 'external media',
  external_media_stop: 'external media',
  ai_talk: 'ai',
  ai_task: 'ai',
  ai_summary: 'ai',
  message_send: 'message',
  email_send: 'email',
  conversation_send: 'conversation',
  case_create: 'workspace',
  /** The signing key of a fetched document (an inline one needs nothing). */
  twiml: 'twiml',
  speech_gather: 'speech',
  twiml_recording: 'twiml',
  sip_refer: 'twiml',
  conversation_relay: 'twiml',
  voicemail: 'voicemail',
  voicemail_main: 'voicemail',
};

export const ACTION_SPECS: Readonly<Record<ActionType, ActionSpec>> = Object.fromEntries(
  ACTION_TYPES.map((type) => {
    const schema = SCHEMAS[type];
    if (!schema) throw new Error(`no option schema for action type ${type}`);
    const spec: ActionSpec = {
      type,
      schema,
      needsCall: NEEDS_CALL.has(type),
      subsystem: SUBSYSTEM[type],
      deprecated: type === 'condition_call_digits' || type === 'condition_call_status',
    };
    return [type, spec];
  }),
) as Record<ActionType, ActionSpec>;

/** The action ids an option points at (goto, branch, condition_* false targets). */
export function targetsOf(type: ActionType, option: Record<string, unknown>): TargetRef[] {
  const out: TargetRef[] = [];
  const add = (field: string, id: unknown) => {
    if (typeof id === 'string' && !isUnset(id)) out.push({ field, id });
  };
  switch (type) {
    case 'goto':
      add('target_id', option.target_id);
      break;
    case 'branch':
      add('default_target_id', option.default_target_id);
      for (const [k, v] of Object.entries((option.target_ids as Record<string, unknown>) ?? {})) add(`target_ids.${k}`, v);
      break;
    case 'condition_variable':
    case 'condition_datetime':
    case 'condition_call_digits':
    case 'condition_call_status':
      add('false_target_id', option.false_target_id);
      break;
    default:
      break;
  }
  return out;
}
