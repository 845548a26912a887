/** Row types of core/repos/outplans.ts's tables, declared apart so core/db/tables.ts imports no repository. */
import type { DialWindow } from '../../campaigns/dialplan';
import type { Address } from '../../address';

export interface OutplanRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  source: Address;
  /** milliseconds */
  dial_timeout: number;
  /** milliseconds */
  try_interval: number;
  max_try_count_0: number;
  max_try_count_1: number;
  max_try_count_2: number;
  max_try_count_3: number;
  max_try_count_4: number;
  /** IANA zone of dial_windows */
  timezone: string;
  /** when dialling is allowed (core/campaigns/dialplan.ts); empty = any time */
  dial_windows: DialWindow[];
  /** milliseconds before a retry after that outcome; null = try_interval */
  try_interval_busy: number | null;
  try_interval_noanswer: number | null;
  try_interval_failed: number | null;
  try_interval_machine: number | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
