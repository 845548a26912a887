/** Row types of core/repos/timeline-analyses.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type AnalysisStatus = 'progressing' | 'completed' | 'failed';

export interface TimelineAnalysisRow {
  id: string;
  customer_id: string;
  activeflow_id: string;
  status: AnalysisStatus;
  result: Record<string, unknown> | null;
  error: string;
  tm_create: Date;
  tm_update: Date | null;
}
