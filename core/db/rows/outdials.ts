/** Row types of core/repos/outdials.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { OutdialtargetStatus } from '../../campaigns/model';
import type { Address } from '../../address';

export interface OutdialRow {
  id: string;
  customer_id: string;
  campaign_id: string;
  name: string;
  detail: string;
  data: string;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}

export interface OutdialtargetRow {
  id: string;
  customer_id: string;
  outdial_id: string;
  name: string;
  detail: string;
  data: string;
  status: OutdialtargetStatus;
  destination_0: Address | null;
  destination_1: Address | null;
  destination_2: Address | null;
  destination_3: Address | null;
  destination_4: Address | null;
  try_count_0: number;
  try_count_1: number;
  try_count_2: number;
  try_count_3: number;
  try_count_4: number;
  tm_next_try: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
