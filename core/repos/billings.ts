/** billings: the ledger. Every balance change writes one row; `idempotency_key` makes retries safe. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { BillingRow } from '../db/rows/billings';
export { BILLING_STATUSES, type BillingRow, type BillingStatus, COST_TYPES, type CostType, REFERENCE_TYPES, type ReferenceType, TRANSACTION_TYPES, type TransactionType } from '../db/rows/billings';

export type BillingCreate = Partial<Omit<BillingRow, 'id' | 'tm_create' | 'tm_update' | 'tm_delete'>> &
  Pick<BillingRow, 'customer_id' | 'account_id' | 'transaction_type' | 'status' | 'idempotency_key'>;

export function billingJson(b: BillingRow) {
  return {
    id: b.id,
    customer_id: b.customer_id,
    account_id: b.account_id,
    transaction_type: b.transaction_type,
    status: b.status,
    reference_type: b.reference_type,
    reference_id: b.reference_id,
    cost_type: b.cost_type,
    usage_duration: b.usage_duration,
    billable_units: b.billable_units,
    rate_token_per_unit: b.rate_token_per_unit,
    rate_credit_per_unit: b.rate_credit_per_unit,
    amount_token: b.amount_token,
    amount_credit: b.amount_credit,
    balance_token_snapshot: b.balance_token_snapshot,
    balance_credit_snapshot: b.balance_credit_snapshot,
    tm_billing_start: formatLegacy(b.tm_billing_start),
    tm_billing_end: formatLegacy(b.tm_billing_end),
    tm_create: formatLegacy(b.tm_create),
    tm_update: formatLegacy(b.tm_update),
    tm_delete: formatLegacy(b.tm_delete),
  };
}

export function billingsRepo(db: Db) {
  const table = () => db('billings');
  return {
    async create(input: BillingCreate): Promise<BillingRow> {
      const row = { reference_id: EMPTY_UUID, ...input, id: newId(), tm_create: clock.now() };
      const [created] = await table().insert(row).returning('*');
      return created as BillingRow;
    },
    async get(id: string): Promise<BillingRow | null> {
      return ((await table().where({ id }).whereNull('tm_delete').first()) as BillingRow | undefined) ?? null;
    },
    async getByKey(key: string): Promise<BillingRow | null> {
      return ((await table().where({ idempotency_key: key }).first()) as BillingRow | undefined) ?? null;
    },
    async update(id: string, patch: Partial<BillingRow>): Promise<BillingRow> {
      const [row] = await table()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return row as BillingRow;
    },
    async list(customerId: string, params: PageParams): Promise<Page<BillingRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<BillingRow>(q, params), (r) => r);
    },
  };
}
