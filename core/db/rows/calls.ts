/** Row types of core/repos/calls.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';
import type { CallDirection, CallStatus, CallType, HangupBy, HangupReason, MuteDirection } from '../../calls/model';
import type { CallQuality } from '../../quality/leg';

export interface CallRow {
  id: string;
  customer_id: string;
  owner_id: string;
  owner_type: string;
  flow_id: string;
  activeflow_id: string;
  type: CallType;
  master_call_id: string;
  chained_call_ids: string[];
  recording_id: string;
  recording_ids: string[];
  groupcall_id: string;
  source: Address;
  destination: Address;
  status: CallStatus;
  direction: CallDirection;
  mute_direction: MuteDirection;
  hangup_by: HangupBy;
  hangup_reason: HangupReason;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  sip_call_id: string;
  node_id: string;
  /** our extension: the call's media quality (core/quality/leg.ts), written at hangup; null without media */
  quality: CallQuality | null;
  tm_ringing: Date | null;
  tm_progressing: Date | null;
  tm_hangup: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
