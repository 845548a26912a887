/** Row types of core/repos/summaries.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type SummaryReferenceType = 'call' | 'conference' | 'transcribe' | 'recording';

export interface SummaryRow {
  id: string;
  customer_id: string;
  activeflow_id: string | null;
  on_end_flow_id: string | null;
  reference_type: SummaryReferenceType;
  reference_id: string;
  status: 'progressing' | 'done';
  language: string;
  content: string;
  status_message: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
