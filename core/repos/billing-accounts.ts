/** billing_accounts: one live account per customer; balance in micros (1 USD = 1,000,000). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { BillingAccountRow } from '../db/rows/billing-accounts';
export type { BillingAccountRow } from '../db/rows/billing-accounts';

export const MICROS_PER_UNIT = 1_000_000;

/** BillingManagerAccountAdmin plus `balance` (the credit in currency units, as VoIPbin's older field). */
export function billingAccountJson(a: BillingAccountRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    name: a.name,
    detail: a.detail,
    status: a.status,
    plan_type: a.plan_type,
    plan_status: a.plan_status,
    balance: a.balance_credit / MICROS_PER_UNIT,
    balance_credit: a.balance_credit,
    balance_token: a.balance_token,
    payment_type: a.payment_type,
    payment_method: a.payment_method,
    paddle_customer_id: a.paddle_customer_id,
    tm_last_topup: formatLegacy(a.tm_last_topup),
    tm_next_topup: formatLegacy(a.tm_next_topup),
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export function billingAccountsRepo(db: Db) {
  const table = () => db('billing_accounts');
  return {
    async get(id: string): Promise<BillingAccountRow | null> {
      return ((await table().where({ id }).whereNull('tm_delete').first()) as BillingAccountRow | undefined) ?? null;
    },
    async getByCustomer(customerId: string): Promise<BillingAccountRow | null> {
      return ((await table().where({ customer_id: customerId }).whereNull('tm_delete').first()) as BillingAccountRow | undefined) ?? null;
    },
    /** The customer's account row locked until the transaction ends (`db` must be a transaction). */
    async lockByCustomer(customerId: string): Promise<BillingAccountRow | null> {
      const row = await table().where({ customer_id: customerId }).whereNull('tm_delete').forUpdate().first();
      return (row as BillingAccountRow | undefined) ?? null;
    },
    async lock(id: string): Promise<BillingAccountRow | null> {
      return ((await table().where({ id }).whereNull('tm_delete').forUpdate().first()) as BillingAccountRow | undefined) ?? null;
    },
    /** Creates the customer's account unless a live one exists; returns the live one either way. */
    async ensure(customerId: string, initialCredit = 0): Promise<BillingAccountRow> {
      await db.raw(
        `INSERT INTO billing_accounts (id, customer_id, name, balance_credit, tm_create)
         VALUES (?, ?, 'default', ?, ?)
         ON CONFLICT (customer_id) WHERE tm_delete IS NULL DO NOTHING`,
        [newId(), customerId, initialCredit, clock.now()],
      );
      const row = await this.getByCustomer(customerId);
      if (!row) throw new Error(`billing account of customer ${customerId} vanished`);
      return row;
    },
    /** Adds `delta` micros (negative to debit) and returns the new row. */
    async addCredit(id: string, delta: number, opts: { topup?: boolean } = {}): Promise<BillingAccountRow> {
      const now = clock.now();
      const values: Record<string, unknown> = { balance_credit: db.raw('balance_credit + ?', [delta]), tm_update: now };
      if (opts.topup) values.tm_last_topup = now;
      const [row] = await table().where({ id }).update(values).returning('*');
      return row as BillingAccountRow;
    },
    async update(id: string, patch: Partial<Pick<BillingAccountRow, 'name' | 'detail' | 'status' | 'payment_type' | 'payment_method' | 'paddle_customer_id'>>): Promise<BillingAccountRow | null> {
      const [row] = await table()
        .where({ id })
        .whereNull('tm_delete')
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as BillingAccountRow | undefined) ?? null;
    },
    async list(params: PageParams, filter: { customerId?: string } = {}): Promise<Page<BillingAccountRow>> {
      const q = table().whereNull('tm_delete').select('*');
      if (filter.customerId) q.where({ customer_id: filter.customerId });
      return toPage(await paginate<BillingAccountRow>(q, params), (r) => r);
    },
  };
}
