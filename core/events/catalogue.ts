/**
 * Every event type customers receive (the spec's event list and VoIPbin's), with the resource its topic names and
 * where its payload comes from. Publishers call `publishResourceEvent` after the Postgres write so
 * each change is published exactly once, with the resource's API JSON as `data`.
 */
import type { EventPublisher, PlatformEvent } from './bus';

/** Topic resource segment and the payload (a resource's API JSON) of each event type. */
const CATALOGUE = {
  // call_quality / call_quality_alarm (media-app/call/quality.ts): a leg's quality sample and threshold crossings, with call_id
  call: ['call_created', 'call_updated', 'call_dialing', 'call_ringing', 'call_progressing', 'call_terminating', 'call_canceling', 'call_hangup', 'call_deleted', 'call_quality', 'call_quality_alarm'],
  groupcall: ['groupcall_created', 'groupcall_progressing', 'groupcall_hangup', 'groupcall_deleted'],
  // a transfer's end (media-app/transfer): the Transfer's API JSON plus fail_reason
  transfer: ['transfer_done', 'transfer_failed'],
  // call park (media-app/pbx/park.ts): the ParkedCall JSON with the parked call's id (call_unparked adds `reason`)
  parkedcall: ['call_parked', 'call_unparked', 'park_timeout'],
  // supervisor (media-app/pbx/supervise.ts): the Supervision JSON (core/pbx/supervisions.ts); _ended adds `reason`
  supervision: ['supervise_started', 'supervise_updated', 'supervise_ended'],
  activeflow: ['activeflow_created', 'activeflow_updated', 'activeflow_deleted'],
  recording: ['recording_started', 'recording_finished'],
  conference: ['conference_created', 'conference_updated', 'conference_deleted'],
  transcribe: ['transcribe_created', 'transcribe_progressing', 'transcribe_done', 'transcribe_speech_started', 'transcribe_speech_interim', 'transcribe_speech_ended'],
  transcript: ['transcript_created'],
  number: ['number_created', 'number_updated', 'number_deleted'],
  message: ['message_created', 'message_updated', 'message_deleted'],
  email: ['email_created', 'email_updated', 'email_deleted'],
  queuecall: ['queuecall_created', 'queuecall_waiting', 'queuecall_connecting', 'queuecall_serviced', 'queuecall_done', 'queuecall_abandoned', 'queuecall_deleted'],
  agent: ['agent_created', 'agent_updated', 'agent_deleted', 'agent_status_updated'],
  campaign: ['campaign_created', 'campaign_updated', 'campaign_deleted', 'campaign_status_run', 'campaign_status_stopping', 'campaign_status_stop'],
  campaigncall: ['campaigncall_created', 'campaigncall_updated', 'campaigncall_deleted'],
  outdial: ['outdial_created', 'outdial_updated', 'outdial_deleted'],
  conversation: ['conversation_created', 'conversation_updated', 'conversation_message_created', 'conversation_message_updated', 'conversation_message_deleted'],
  account: ['account_created', 'account_updated', 'account_deleted'],
  ai: ['ai_created', 'ai_updated', 'ai_deleted'],
  aicall: [
    'aicall_status_initializing',
    'aicall_status_progressing',
    'aicall_status_pausing',
    'aicall_status_resuming',
    'aicall_status_terminating',
    'aicall_status_terminated',
    'aimessage_created',
    'aimessage_intermediate',
    // the AI's cloud voice failed and its fallback speaks (media-app/voices), or failed with none
    'aicall_tts_fallback',
    'aicall_tts_failed',
    // the AI's recogniser failed and its fallback hears the caller (media-app/ai/recogniser.ts), or failed with none
    'aicall_stt_fallback',
    'aicall_stt_failed',
    // a speech-to-speech model (media-app/ai/realtime.ts) could not be reached or refused the key
    'aicall_realtime_failed',
    // the chat model failed or was slow before its first token and parameter.llm_fallback answers (core/llm/fallback.ts)
    'aicall_llm_fallback',
    // the chat model (or its fallback) failed; the flow's error says the same (core/ai/session.ts)
    'aicall_llm_failed',
    // a voice turn's latency breakdown (media-app/ai/voice.ts, docs/ai.md "Turn-taking"), with aimessage_ids
    'aicall_turn',
  ],
  summary: ['summary_created', 'summary_updated', 'summary_deleted'],
  team: ['team_created', 'team_updated', 'team_deleted'],
  chat: ['chat_created', 'chat_updated', 'chat_deleted', 'chatmessage_created', 'chatmessage_deleted', 'chatmessage_reaction_updated', 'chatparticipant_added', 'chatparticipant_removed'],
  webchat_session: ['webchat_message_created', 'webchat_session_ended'],
  // outbound registration (media-app/outreg): a provider's are the platform's (customer_id is the empty UUID)
  provider: ['provider_registration_updated'],
  trunk: ['trunk_registration_updated'],
  // POST /customer/webhook_test (an extension): a test event through the ordinary webhook delivery
  webhook: ['webhook_test'],
  // issue 37 voicemail (an extension): boxes and their messages (core/voicemail/)
  // a wrong PIN at the voice menu, a box or caller locked by wrong PINs (`caller`, `failures` / `locked`, `lock_sec` added), an admin's unlock
  voicemail_box: ['voicemail_box_created', 'voicemail_box_updated', 'voicemail_box_deleted', 'voicemail_box_login_failed', 'voicemail_box_locked', 'voicemail_box_unlocked'],
  // issue 56 eval runs (core/evals/events.ts, payloads in zod there): created, each call ended, the run's end with its summary
  eval_run: ['eval_run_created', 'eval_run_progressed', 'eval_run_finished', 'eval_run_failed'],
  voicemail_message: ['voicemail_message_created', 'voicemail_message_updated', 'voicemail_message_deleted'],
} as const;

type Catalogue = typeof CATALOGUE;
export type TopicResource = keyof Catalogue;
export type EventType = Catalogue[TopicResource][number];

const RESOURCE_OF = new Map<string, TopicResource>();
for (const [res, types] of Object.entries(CATALOGUE) as [TopicResource, readonly string[]][]) {
  for (const t of types) RESOURCE_OF.set(t, res);
}

export const EVENT_TYPES: readonly EventType[] = [...RESOURCE_OF.keys()] as EventType[];

export function isEventType(s: string): s is EventType {
  return RESOURCE_OF.has(s);
}

/**
 * The topic resource of an event type: mostly its prefix (call_hangup → call); messages of an AI
 * call go under aicall, chat messages under chat, webchat messages under webchat_session.
 */
export function topicResourceOf(eventType: string): string {
  const r = RESOURCE_OF.get(eventType);
  if (r) return r;
  const i = eventType.indexOf('_');
  return i < 0 ? eventType : eventType.slice(0, i);
}

/** Which id names the topic for payloads that belong to a parent resource (aimessage → its aicall). */
const PARENT_ID_FIELD: Partial<Record<string, string>> = {
  aimessage_created: 'aicall_id',
  aimessage_intermediate: 'aicall_id',
  call_quality: 'call_id',
  call_quality_alarm: 'call_id',
  chatmessage_created: 'chat_id',
  chatmessage_deleted: 'chat_id',
  chatmessage_reaction_updated: 'chat_id',
  chatparticipant_added: 'chat_id',
  chatparticipant_removed: 'chat_id',
  webchat_message_created: 'session_id',
  transcript_created: 'id',
  transcribe_speech_started: 'transcribe_id',
  transcribe_speech_interim: 'transcribe_id',
  transcribe_speech_ended: 'transcribe_id',
};

/** A payload as published: the resource's API JSON, which always names its id and customer. */
export interface ResourcePayload {
  id: string;
  customer_id: string;
  [k: string]: unknown;
}

/** The topic `customer_id:<cid>:<resource>:<id>` an event is published under. */
export function topicOf(e: Pick<PlatformEvent, 'event_type' | 'customer_id' | 'resource_id'>): string {
  return `customer_id:${e.customer_id}:${topicResourceOf(e.event_type)}:${e.resource_id}`;
}

/**
 * The one way to publish: after the row is written, pass its API JSON. The topic id is the
 * resource's own id, or its parent's for the few types that belong to a parent.
 */
export async function publishResourceEvent(publisher: EventPublisher, eventType: EventType, payload: ResourcePayload): Promise<PlatformEvent> {
  const field = PARENT_ID_FIELD[eventType];
  const parent = field ? payload[field] : undefined;
  const resourceId = typeof parent === 'string' && parent ? parent : payload.id;
  return publisher.publish(eventType, payload.customer_id, resourceId, payload as Record<string, unknown>);
}
