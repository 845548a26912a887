/** Row types of core/repos/transfers.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { Address } from '../../address';
import type { TransferSource, TransferStatus, TransferType } from '../../transfers/model';

export interface TransferRow {
  id: string;
  customer_id: string;
  type: TransferType;
  transferer_call_id: string;
  transferee_addresses: Address[];
  transferee_call_id: string;
  groupcall_id: string;
  confbridge_id: string;
  status: TransferStatus;
  source: TransferSource;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
