/**
 * The Action and Flow shapes of the spec (Resources: Flow, Action) as the flow engine sees them.
 * Shared by control-api (validation on /flows and /activeflows) and media-app (the runner).
 */
import { EMPTY_UUID } from '../ids';

/** Every action type of the spec, deprecated ones included (voipbin TypeListAll). */
export const ACTION_TYPES = [
  'ai_summary',
  'ai_talk',
  'ai_task',
  'amd',
  'answer',
  'beep',
  'block',
  'branch',
  'call',
  'case_create',
  'condition_call_digits',
  'condition_call_status',
  'condition_datetime',
  'condition_variable',
  'confbridge_join',
  'conference_join',
  'connect',
  /** Our extension (issue 36): Twilio's ConversationRelay over the platform's STT and TTS (TwiML <Connect><ConversationRelay>). */
  'conversation_relay',
  'conversation_send',
  'digits_receive',
  'digits_send',
  'echo',
  'email_send',
  'external_media_start',
  'external_media_stop',
  'fetch',
  'fetch_flow',
  'goto',
  'hangup',
  'message_send',
  'mute',
  'park',
  'play',
  /** Our extension (TwiML <Dial><Queue>): takes the oldest waiting caller of a queue and bridges the two. */
  'queue_dequeue',
  'queue_join',
  'recording_start',
  'recording_stop',
  /** Our extension (issue 36): a SIP REFER to the call's far end, waiting for its NOTIFYs (TwiML <Refer>). */
  'sip_refer',
  'sleep',
  /** Our extension (issue 36): listen for the caller's speech (and keys) while prompts play (TwiML <Gather input="speech">). */
  'speech_gather',
  'stop',
  'stream_echo',
  'talk',
  'transcribe_start',
  'transcribe_stop',
  'transcribe_recording',
  /** Our extension (issue 36): fetch or take TwiML, compile it and run it as the next actions (core/twiml). */
  'twiml',
  /** Our extension (issue 36): a recording's Twilio status and transcription callbacks, sent in the background. */
  'twiml_recording',
  'variable_set',
  // issue 37 voicemail (our extension of the reference list): leave a message, the voice menu of a box
  'voicemail',
  'voicemail_main',
  'webhook_send',
] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** Names that are not types, with what to use instead (spec: Action). */
export const RETIRED_TYPES: Readonly<Record<string, string>> = {
  agent_call: 'connect',
  chatbot_talk: 'ai_talk',
  hangup_relay: 'hangup (with option reference_id)',
};

/** Deprecated types still accepted (spec: Versioning 5), and the type that replaces each. */
export const DEPRECATED_TYPES: Readonly<Partial<Record<ActionType, ActionType>>> = {
  condition_call_digits: 'condition_variable',
  condition_call_status: 'condition_variable',
};

export interface Action {
  id: string;
  /** Empty or the empty UUID: the next array element. */
  next_id: string;
  type: ActionType;
  option: Record<string, unknown>;
  /** Read-only: set when the action runs (activeflow responses). */
  tm_execute?: string | null;
}

export interface FlowDefinition {
  id: string;
  actions: Action[];
  /** Empty UUID when unset. */
  on_complete_flow_id: string;
}

export { EMPTY_UUID };

/** Reserved action ids (voipbin): start, finish and next have a meaning of their own. */
export const RESERVED_ACTION_IDS = new Set(['00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000003']);

/** True when a reference field is unset (empty string, empty UUID, absent). */
export function isUnset(id: unknown): boolean {
  return id === undefined || id === null || id === '' || id === EMPTY_UUID;
}

export function isActionType(t: unknown): t is ActionType {
  return typeof t === 'string' && (ACTION_TYPES as readonly string[]).includes(t);
}
