/** Row types of core/repos/activeflows.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Action } from '../../flow';
import type { ActiveflowRecord, ExecutedAction } from '../../flow/activeflow';

export interface ActiveflowRow {
  id: string;
  customer_id: string;
  flow_id: string;
  status: ActiveflowRecord['status'];
  reference_type: ActiveflowRecord['reference_type'];
  reference_id: string;
  reference_activeflow_id: string;
  on_complete_flow_id: string;
  webhook_uri: string;
  webhook_method: ActiveflowRecord['webhook_method'];
  current_action: Action | null;
  forward_action_id: string;
  executed_actions: ExecutedAction[];
  variables: Record<string, string>;
  complete_count: number;
  end_reason: ActiveflowRecord['end_reason'];
  error: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
