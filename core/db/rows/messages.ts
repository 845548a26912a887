/** Row types of core/repos/messages.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export const TARGET_STATUSES = ['received', 'queued', 'gw_timeout', 'sent', 'dlr_timeout', 'failed', 'delivered'] as const;

export type TargetStatus = (typeof TARGET_STATUSES)[number];

export type MessageDirection = 'outbound' | 'inbound';

export interface MessageRow {
  id: string;
  customer_id: string;
  type: 'sms';
  source: Address;
  text: string;
  direction: MessageDirection;
  provider: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface TargetRow {
  id: string;
  message_id: string;
  idx: number;
  destination: Address;
  status: TargetStatus;
  parts: number;
  provider_ref: string;
  error: string;
  tm_update: Date | null;
}
