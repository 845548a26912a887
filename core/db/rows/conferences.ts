/** Row types of core/repos/conferences.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { ConferenceStatus, ConferenceType } from '../../conferences/model';

export interface ConferenceRow {
  id: string;
  customer_id: string;
  type: ConferenceType;
  status: ConferenceStatus;
  name: string;
  detail: string;
  data: Record<string, unknown>;
  timeout: number;
  pre_flow_id: string;
  post_flow_id: string;
  conferencecall_ids: string[];
  recording_id: string;
  recording_ids: string[];
  transcribe_id: string;
  transcribe_ids: string[];
  direct_hash: string;
  node_id: string;
  /** Made by a name (TwiML): ends when its last participant leaves; one live per customer and name. */
  ends_when_empty: boolean;
  /** 0: no limit. */
  max_participants: number;
  /** When the first participant entered the mix (participants with start_on_enter false wait for it). */
  tm_start: Date | null;
  /** The room's Twilio statusCallback (media-app/twiml/conference-callbacks.ts); null: none. */
  status_callback: ConferenceStatusCallback | null;
  /** The last SequenceNumber sent to status_callback. */
  callback_seq: number;
  /** TwiML <Conference record>: the room's recording request and, once made, its recording (core/conferences/twilio-recording.ts). */
  twilio_record: { status_callback?: ConferenceStatusCallback; recording_id?: string } | null;
  tm_end: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface ConferenceStatusCallback {
  url: string;
  method: 'GET' | 'POST';
  events: string[];
}
