/** Row types of core/repos/speakings.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type SpeakingStatus = 'initiating' | 'active' | 'stopped';

export type SpeakingDirection = 'in' | 'out' | 'both';

export type SpeakingReferenceType = 'call' | 'confbridge';

export interface SpeakingRow {
  id: string;
  customer_id: string;
  reference_type: SpeakingReferenceType;
  reference_id: string;
  language: string;
  provider: string;
  voice_id: string;
  direction: SpeakingDirection;
  status: SpeakingStatus;
  say_count: number;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
