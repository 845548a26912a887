/** Row types of core/repos/billings.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const TRANSACTION_TYPES = ['usage', 'top_up', 'adjustment', 'refund'] as const;

export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export const BILLING_STATUSES = ['progressing', 'end', 'pending', 'finished'] as const;

export type BillingStatus = (typeof BILLING_STATUSES)[number];

export const COST_TYPES = ['', 'call_pstn_outgoing', 'call_pstn_incoming', 'call_vn', 'call_extension', 'call_direct_ext', 'sms', 'email', 'number', 'number_renew', 'tts', 'recording'] as const;

export type CostType = (typeof COST_TYPES)[number];

export const REFERENCE_TYPES = [
  '',
  'call',
  'call_extension',
  'sms',
  'email',
  'number',
  'number_renew',
  'credit_free_tier',
  'monthly_allowance',
  'credit_adjustment',
  'token_adjustment',
  'speaking',
  'recording',
] as const;

export type ReferenceType = (typeof REFERENCE_TYPES)[number];

export interface BillingRow {
  id: string;
  customer_id: string;
  account_id: string;
  transaction_type: TransactionType;
  status: BillingStatus;
  reference_type: ReferenceType;
  reference_id: string;
  cost_type: CostType;
  usage_duration: number;
  billable_units: number;
  rate_token_per_unit: number;
  rate_credit_per_unit: number;
  amount_token: number;
  amount_credit: number;
  balance_token_snapshot: number;
  balance_credit_snapshot: number;
  idempotency_key: string;
  tm_billing_start: Date | null;
  tm_billing_end: Date | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
