/** Row types of core/repos/flows.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Action } from '../../flow';

export interface FlowRow {
  id: string;
  customer_id: string;
  type: string;
  name: string;
  detail: string;
  actions: Action[];
  on_complete_flow_id: string;
  persist: boolean;
  /** `direct.<hash>` names the flow; '' until one is generated. */
  direct_hash: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
