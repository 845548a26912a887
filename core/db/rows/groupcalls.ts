/** Row types of core/repos/groupcalls.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { AnswerMethod, GroupcallStatus, RingMethod } from '../../groupcalls/model';
import type { Address } from '../../address';

export interface GroupcallRow {
  id: string;
  customer_id: string;
  owner_id: string;
  owner_type: string;
  status: GroupcallStatus;
  flow_id: string;
  source: Address;
  destinations: Address[];
  master_call_id: string;
  master_groupcall_id: string;
  ring_method: RingMethod;
  answer_method: AnswerMethod;
  answer_call_id: string;
  call_ids: string[];
  answer_groupcall_id: string;
  groupcall_ids: string[];
  call_count: number;
  groupcall_count: number;
  dial_index: number;
  data: Record<string, unknown>;
  node_id: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
