/** Row types of core/repos/transcripts.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface TranscriptRow {
  id: string;
  customer_id: string;
  transcribe_id: string;
  direction: 'in' | 'out';
  message: string;
  offset_ms: number;
  confidence: number | null;
  tm_transcript: Date;
  tm_create: Date;
}
