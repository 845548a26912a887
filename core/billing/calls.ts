/**
 * Per-minute call charges. The call code opens a billing row when a chargeable call starts
 * (`startCallBilling`, which refuses with 402 when the balance cannot pay the first minute) and
 * closes it at hangup (`endCallBilling`, minutes rounded up, charged even into a negative balance
 * because the call already happened). Both are idempotent per call id.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { billingAccountsRepo } from '../repos/billing-accounts';
import { billingsRepo, type BillingRow, type CostType } from '../repos/billings';
import { charge, ensureBillingAccount, inTransaction, insufficientBalance } from './ledger';
import { rates } from './rates';

export type CallCostType = Extract<CostType, 'call_pstn_outgoing' | 'call_pstn_incoming' | 'call_vn' | 'call_extension' | 'call_direct_ext'>;

const key = (callId: string) => `call:${callId}`;

/** Billable minutes of a call lasting `seconds` (a started minute counts whole). */
export function billableMinutes(seconds: number): number {
  return seconds <= 0 ? 0 : Math.ceil(seconds / 60);
}

/** 402 unless the customer can pay one minute of `costType` now. Free cost types always pass. */
export async function assertCallAffordable(db: Db, customerId: string, costType: CallCostType): Promise<void> {
  const rate = rates()[costType];
  const account = await ensureBillingAccount(db, customerId);
  if (account.status !== 'active') throw insufficientBalance(`billing account is ${account.status}`);
  if (rate > 0 && account.balance_credit < rate) throw insufficientBalance('balance does not cover one minute of this call');
}

export async function startCallBilling(db: Db, p: { customerId: string; callId: string; costType: CallCostType; referenceType?: 'call' | 'call_extension'; tmStart?: Date }): Promise<BillingRow> {
  await assertCallAffordable(db, p.customerId, p.costType);
  return inTransaction(db, async (trx) => {
    const existing = await billingsRepo(trx).getByKey(key(p.callId));
    if (existing) return existing;
    const account = await billingAccountsRepo(trx).getByCustomer(p.customerId);
    if (!account) throw insufficientBalance('no billing account');
    return billingsRepo(trx).create({
      customer_id: p.customerId,
      account_id: account.id,
      transaction_type: 'usage',
      status: 'progressing',
      reference_type: p.referenceType ?? 'call',
      reference_id: p.callId,
      cost_type: p.costType,
      rate_credit_per_unit: rates()[p.costType],
      balance_credit_snapshot: account.balance_credit,
      idempotency_key: key(p.callId),
      tm_billing_start: p.tmStart ?? clock.now(),
    });
  });
}

/** Closes the call's billing row and takes the money; returns the finished row (or null without a start). */
export async function endCallBilling(db: Db, p: { callId: string; tmEnd?: Date }): Promise<BillingRow | null> {
  return inTransaction(db, async (trx) => {
    const row = (await trx('billings')
      .where({ idempotency_key: key(p.callId) })
      .forUpdate()
      .first()) as BillingRow | undefined;
    if (!row) return null;
    if (row.status !== 'progressing') return row;
    const end = p.tmEnd ?? clock.now();
    const seconds = Math.max(0, Math.ceil((end.getTime() - (row.tm_billing_start ?? row.tm_create).getTime()) / 1000));
    const units = billableMinutes(seconds);
    const amount = units * row.rate_credit_per_unit;
    const after = amount > 0 ? await billingAccountsRepo(trx).addCredit(row.account_id, -amount) : await billingAccountsRepo(trx).get(row.account_id);
    return billingsRepo(trx).update(row.id, {
      status: 'end',
      usage_duration: seconds,
      billable_units: units,
      amount_credit: -amount,
      balance_credit_snapshot: after?.balance_credit ?? row.balance_credit_snapshot,
      tm_billing_end: end,
    });
  });
}

/** One-shot charge of a finished call of `seconds` (when there was no start row). */
export async function chargeCallMinutes(db: Db, p: { customerId: string; callId: string; costType: CallCostType; seconds: number }): Promise<BillingRow> {
  const rate = rates()[p.costType];
  const units = billableMinutes(p.seconds);
  return charge(db, {
    customerId: p.customerId,
    amount: units * rate,
    costType: p.costType,
    referenceType: 'call',
    referenceId: p.callId,
    idempotencyKey: key(p.callId),
    billableUnits: units,
    ratePerUnit: rate,
    usageDuration: p.seconds,
    allowNegative: true,
  });
}
