/** Row types of core/repos/recordings.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface RecordingRow {
  id: string;
  customer_id: string;
  owner_id: string;
  owner_type: string;
  activeflow_id: string;
  reference_type: string;
  reference_id: string;
  status: 'initiating' | 'recording' | 'stopping' | 'ended';
  format: string;
  on_end_flow_id: string;
  options: Record<string, unknown>;
  filenames: string[];
  tm_start: Date | null;
  tm_end: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
