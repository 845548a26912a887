/** Per-purchase number charges: a normal number costs `number` on purchase and `number_renew` per renewal. */
import type { Db } from '../db/knex';
import type { BillingRow } from '../repos/billings';
import { charge } from './ledger';
import { rates } from './rates';

export function numberPrice(kind: 'number' | 'number_renew'): number {
  return rates()[kind];
}

/** Charges the purchase (or one renewal, keyed by `renewalKey`) of `numberId`; 402 when unaffordable. */
export async function chargeNumber(db: Db, p: { customerId: string; numberId: string; kind: 'number' | 'number_renew'; renewalKey?: string }): Promise<BillingRow> {
  const amount = numberPrice(p.kind);
  return charge(db, {
    customerId: p.customerId,
    amount,
    costType: p.kind,
    referenceType: p.kind,
    referenceId: p.numberId,
    idempotencyKey: p.kind === 'number' ? `number:${p.numberId}` : `number_renew:${p.numberId}:${p.renewalKey ?? ''}`,
    ratePerUnit: amount,
  });
}
