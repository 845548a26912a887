/** Row types of core/repos/transcribes.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type TranscribeStatus = 'progressing' | 'done';

export type TranscribeReferenceType = 'call' | 'confbridge' | 'recording';

export type TranscribeDirection = 'in' | 'out' | 'both';

export interface TranscribeRow {
  id: string;
  customer_id: string;
  activeflow_id: string;
  on_end_flow_id: string;
  reference_type: TranscribeReferenceType;
  reference_id: string;
  status: TranscribeStatus;
  language: string;
  direction: TranscribeDirection;
  provider: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
