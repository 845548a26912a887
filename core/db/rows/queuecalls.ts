/** Row types of core/repos/queuecalls.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const QUEUECALL_STATUSES = ['initiating', 'waiting', 'connecting', 'kicking', 'service', 'done', 'abandoned'] as const;

export type QueuecallStatus = (typeof QUEUECALL_STATUSES)[number];

export interface QueuecallRow {
  id: string;
  customer_id: string;
  queue_id: string;
  reference_type: 'call';
  reference_id: string;
  reference_activeflow_id: string;
  status: QueuecallStatus;
  service_agent_id: string;
  node_id: string;
  timeout_wait: number;
  timeout_service: number;
  duration_waiting: number;
  duration_service: number;
  tm_create: Date;
  tm_service: Date | null;
  tm_end: Date | null;
  tm_update: Date | null;
  tm_delete: Date | null;
}
