/** Row types of core/voicemail/messages.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const FOLDERS = ['new', 'old'] as const;

export type Folder = (typeof FOLDERS)[number];

export interface VoicemailMessageRow {
  id: string;
  customer_id: string;
  box_id: string;
  folder: Folder;
  urgent: boolean;
  caller_type: string;
  caller_number: string;
  caller_name: string;
  call_id: string | null;
  recording_id: string | null;
  filename: string;
  duration_ms: number;
  transcript: string;
  /** The AI summary of the transcript (a box with ai_summary), '' when none. */
  summary: string;
  /** Why a box with ai_summary has no summary for this message ('' when it has one or none was asked). */
  summary_error: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
