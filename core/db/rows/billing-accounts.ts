/** Row types of core/repos/billing-accounts.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export interface BillingAccountRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  status: 'active' | 'frozen' | 'deleted';
  plan_type: string;
  plan_status: string;
  balance_credit: number;
  balance_token: number;
  payment_type: string;
  payment_method: string;
  /** The linked Paddle customer (`ctm_...`), '' when none; set by the operator. */
  paddle_customer_id: string;
  tm_last_topup: Date | null;
  tm_next_topup: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
