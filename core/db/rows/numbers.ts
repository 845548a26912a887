/** Row types of core/repos/numbers.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type NumberType = 'normal' | 'virtual';

export interface NumberRow {
  id: string;
  customer_id: string;
  number: string;
  type: NumberType;
  provider_id: string;
  call_flow_id: string;
  message_flow_id: string;
  name: string;
  detail: string;
  status: 'active' | 'deleted';
  t38_enabled: boolean;
  emergency_enabled: boolean;
  metadata: Record<string, unknown>;
  tm_purchase: Date | null;
  tm_renew: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
