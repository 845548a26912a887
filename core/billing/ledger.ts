/**
 * Balance and charges. Every change locks the customer's account row, checks, moves the balance and
 * writes one ledger row in the same transaction, so a failed check leaves nothing half-written, and
 * an idempotency key makes a retried charge (BullMQ delivers at least once) a no-op.
 */
import type { Db, Knex } from '../db/knex';
import { ApiError } from '../errors';
import { EMPTY_UUID } from '../ids';
import { clock } from '../clock';
import { billingAccountsRepo, type BillingAccountRow } from '../repos/billing-accounts';
import { billingsRepo, type BillingRow, type CostType, type ReferenceType } from '../repos/billings';
import { initialCredit } from './rates';

/** 402 INSUFFICIENT_BALANCE, the error later call and message code throws too. */
export function insufficientBalance(message = 'insufficient balance'): ApiError {
  return new ApiError('INSUFFICIENT_BALANCE', message);
}

function isTransaction(db: Db): db is Knex.Transaction {
  return (db as Knex.Transaction).isTransaction === true;
}

/** Runs `fn` in `db` when it already is a transaction, else in a new one. */
export async function inTransaction<T>(db: Db, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return isTransaction(db) ? fn(db) : (db as Knex).transaction(fn);
}

/**
 * The customer's billing account, created on first use (signup does not need to know about billing),
 * and linked from `customers.billing_account_id`.
 */
export async function ensureBillingAccount(db: Db, customerId: string): Promise<BillingAccountRow> {
  const existing = await billingAccountsRepo(db).getByCustomer(customerId);
  if (existing) return existing;
  const account = await billingAccountsRepo(db).ensure(customerId, initialCredit());
  await db('customers').where({ id: customerId, billing_account_id: EMPTY_UUID }).update({ billing_account_id: account.id });
  return account;
}

/** Throws 402 unless the account is active and holds at least `amount` micros. Reads without locking. */
export async function assertAffordable(db: Db, customerId: string, amount: number): Promise<void> {
  const account = await ensureBillingAccount(db, customerId);
  checkAccount(account, amount);
}

function checkAccount(account: BillingAccountRow, amount: number): void {
  if (account.status !== 'active') throw insufficientBalance(`billing account is ${account.status}`);
  if (amount > 0 && account.balance_credit < amount) {
    throw insufficientBalance(`balance ${account.balance_credit} is below the charge of ${amount} micros`);
  }
}

export interface ChargeInput {
  customerId: string;
  /** Micros to take (>= 0). */
  amount: number;
  costType: CostType;
  referenceType: ReferenceType;
  referenceId: string;
  idempotencyKey: string;
  billableUnits?: number;
  ratePerUnit?: number;
  usageDuration?: number;
  tmBillingStart?: Date;
  /** Usage that already happened (a finished call) is charged even into a negative balance. */
  allowNegative?: boolean;
}

/** Takes `amount` from the customer's balance and writes the ledger row; 402 when it cannot. */
export async function charge(db: Db, input: ChargeInput): Promise<BillingRow> {
  if (!Number.isSafeInteger(input.amount) || input.amount < 0) throw new Error('charge amount must be a non-negative integer');
  await ensureBillingAccount(db, input.customerId);
  return inTransaction(db, async (trx) => {
    const done = await billingsRepo(trx).getByKey(input.idempotencyKey);
    if (done) return done;
    const account = await billingAccountsRepo(trx).lockByCustomer(input.customerId);
    if (!account) throw insufficientBalance('no billing account');
    if (!input.allowNegative) checkAccount(account, input.amount);
    const after = input.amount > 0 ? await billingAccountsRepo(trx).addCredit(account.id, -input.amount) : account;
    const now = clock.now();
    return billingsRepo(trx).create({
      customer_id: input.customerId,
      account_id: account.id,
      transaction_type: 'usage',
      status: 'end',
      reference_type: input.referenceType,
      reference_id: input.referenceId,
      cost_type: input.costType,
      usage_duration: input.usageDuration ?? 0,
      billable_units: input.billableUnits ?? 1,
      rate_credit_per_unit: input.ratePerUnit ?? input.amount,
      amount_credit: -input.amount,
      balance_credit_snapshot: after.balance_credit,
      balance_token_snapshot: after.balance_token,
      idempotency_key: input.idempotencyKey,
      tm_billing_start: input.tmBillingStart ?? now,
      tm_billing_end: now,
    });
  });
}

/** Adds `amount` micros to an account (a top-up) and writes the ledger row. */
export async function addBalance(db: Db, accountId: string, amount: number, idempotencyKey: string): Promise<BillingAccountRow> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error('top-up amount must be a positive integer');
  return moveBalance(db, accountId, amount, idempotencyKey, 'top_up');
}

/** Takes `amount` micros from an account (an operator's adjustment; the balance may go below zero). */
export async function subtractBalance(db: Db, accountId: string, amount: number, idempotencyKey: string): Promise<BillingAccountRow> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error('subtracted amount must be a positive integer');
  return moveBalance(db, accountId, -amount, idempotencyKey, 'adjustment');
}

async function moveBalance(db: Db, accountId: string, delta: number, idempotencyKey: string, type: 'top_up' | 'adjustment'): Promise<BillingAccountRow> {
  return inTransaction(db, async (trx) => {
    const accounts = billingAccountsRepo(trx);
    const account = await accounts.lock(accountId);
    if (!account) throw new ApiError('BILLING_ACCOUNT_NOT_FOUND', 'billing account not found');
    if (await billingsRepo(trx).getByKey(idempotencyKey)) return account;
    const after = await accounts.addCredit(account.id, delta, { topup: type === 'top_up' });
    const now = clock.now();
    await billingsRepo(trx).create({
      customer_id: account.customer_id,
      account_id: account.id,
      transaction_type: type,
      status: 'end',
      reference_type: 'credit_adjustment',
      reference_id: account.id,
      billable_units: 1,
      rate_credit_per_unit: Math.abs(delta),
      amount_credit: delta,
      balance_credit_snapshot: after.balance_credit,
      balance_token_snapshot: after.balance_token,
      idempotency_key: idempotencyKey,
      tm_billing_start: now,
      tm_billing_end: now,
    });
    return after;
  });
}
