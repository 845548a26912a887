/** Row types of core/voicemail/boxes.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface VoicemailBoxRow {
  id: string;
  customer_id: string;
  extension_id: string | null;
  number: string;
  name: string;
  detail: string;
  pin_hash: string;
  greeting_unavailable: string;
  greeting_busy: string;
  greeting_name: string;
  greeting_text: string;
  language: string;
  max_message_sec: number;
  max_messages: number;
  email: string;
  attach_audio: boolean;
  delete_after_email: boolean;
  /** Opt-in: the platform's LLM summarises each message's transcript (migration 0947). */
  ai_summary: boolean;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
