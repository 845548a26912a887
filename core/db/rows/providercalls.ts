/** Row types of core/repos/providercalls.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';

export interface ProvidercallRow {
  id: string;
  customer_id: string;
  provider_id: string;
  flow_id: string;
  source: Address;
  destinations: Address[];
  anonymous: 'yes' | 'no' | 'auto';
  call_ids: string[];
  groupcall_ids: string[];
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
