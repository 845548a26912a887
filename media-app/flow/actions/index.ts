/**
 * The registry: action type -> the class that runs it. Changing how one type runs touches its own file
 * and this line, nothing else.
 */
import type { Action, ActionType } from '../../../core/flow';
import type { FlowTask, FlowTaskClass } from './base';
import { AiSummary } from './ai_summary';
import { AiTalk } from './ai_talk';
import { AiTask } from './ai_task';
import { Amd } from './amd';
import { Answer } from './answer';
import { Beep } from './beep';
import { Block } from './block';
import { Branch } from './branch';
import { Call } from './call';
import { CaseCreate } from './case_create';
import { ConditionCallDigits } from './condition_call_digits';
import { ConditionCallStatus } from './condition_call_status';
import { ConditionDatetime } from './condition_datetime';
import { ConditionVariable } from './condition_variable';
import { ConfbridgeJoin } from './confbridge_join';
import { ConferenceJoin } from './conference_join';
import { Connect } from './connect';
import { ConversationSend } from './conversation_send';
import { DigitsReceive } from './digits_receive';
import { DigitsSend } from './digits_send';
import { Echo } from './echo';
import { EmailSend } from './email_send';
import { ExternalMediaStart } from './external_media_start';
import { ExternalMediaStop } from './external_media_stop';
import { Fetch } from './fetch';
import { FetchFlow } from './fetch_flow';
import { Goto } from './goto';
import { Hangup } from './hangup';
import { MessageSend } from './message_send';
import { Mute } from './mute';
import { Play } from './play';
import { QueueJoin } from './queue_join';
import { QueueDequeue } from './queue_dequeue';
import { Park } from './park';
import { RecordingStart } from './recording_start';
import { RecordingStop } from './recording_stop';
import { Sleep } from './sleep';
import { Stop } from './stop';
import { StreamEcho } from './stream_echo';
import { Talk } from './talk';
import { TranscribeStart } from './transcribe_start';
import { TranscribeStop } from './transcribe_stop';
import { TranscribeRecording } from './transcribe_recording';
import { Twiml } from './twiml';
import { SpeechGather } from './speech_gather';
import { TwimlRecording } from './twiml_recording';
import { SipRefer } from './sip_refer';
import { ConversationRelayTask } from './conversation_relay';
import { VariableSet } from './variable_set';
import { Voicemail } from './voicemail';
import { VoicemailMain } from './voicemail_main';
import { WebhookSend } from './webhook_send';

export const ACTION_CLASSES: Readonly<Record<ActionType, FlowTaskClass>> = {
  ai_summary: AiSummary,
  ai_talk: AiTalk,
  ai_task: AiTask,
  amd: Amd,
  answer: Answer,
  beep: Beep,
  block: Block,
  branch: Branch,
  call: Call,
  case_create: CaseCreate,
  condition_call_digits: ConditionCallDigits,
  condition_call_status: ConditionCallStatus,
  condition_datetime: ConditionDatetime,
  condition_variable: ConditionVariable,
  confbridge_join: ConfbridgeJoin,
  conference_join: ConferenceJoin,
  connect: Connect,
  conversation_send: ConversationSend,
  digits_receive: DigitsReceive,
  digits_send: DigitsSend,
  echo: Echo,
  email_send: EmailSend,
  external_media_start: ExternalMediaStart,
  external_media_stop: ExternalMediaStop,
  fetch: Fetch,
  fetch_flow: FetchFlow,
  goto: Goto,
  hangup: Hangup,
  message_send: MessageSend,
  mute: Mute,
  play: Play,
  queue_join: QueueJoin,
  queue_dequeue: QueueDequeue,
  park: Park,
  recording_start: RecordingStart,
  recording_stop: RecordingStop,
  sleep: Sleep,
  stop: Stop,
  stream_echo: StreamEcho,
  talk: Talk,
  transcribe_start: TranscribeStart,
  transcribe_stop: TranscribeStop,
  transcribe_recording: TranscribeRecording,
  twiml: Twiml,
  speech_gather: SpeechGather,
  twiml_recording: TwimlRecording,
  sip_refer: SipRefer,
  conversation_relay: ConversationRelayTask,
  variable_set: VariableSet,
  voicemail: Voicemail,
  voicemail_main: VoicemailMain,
  webhook_send: WebhookSend,
};

/** Builds the task for one action; option is already substituted. */
export function makeTask(action: Action, option: Record<string, unknown>): FlowTask<unknown> {
  const Cls = ACTION_CLASSES[action.type];
  if (!Cls) throw new Error(`no class registered for action type ${action.type}`);
  return new Cls(action, option as never, action.option) as FlowTask<unknown>;
}
