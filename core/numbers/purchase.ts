/**
 * Buying, renewing and releasing numbers. Checks come in the order a caller can act on them:
 * the number itself (400), identity verification for normal numbers (403), availability (409), then
 * the balance (402). The number row and its charge are written in one transaction, so a refused
 * charge leaves no number behind.
 */
import type { Db } from '../db/knex';
import { ApiError, alreadyExists, invalidArgument } from '../errors';
import { EMPTY_UUID } from '../ids';
import { clock } from '../clock';
import { numbersRepo, type NumberRow, type NumberType } from '../repos/numbers';
import { chargeNumber, numberPrice } from '../billing/numbers';
import { assertAffordable, inTransaction } from '../billing/ledger';
import { isE164, isVirtualNumber, randomVirtualNumber, virtualNumberProblem } from './e164';
import { assertFlowRef } from './flow-refs';
import type { AvailableNumber, NumberInventory } from './inventory';

export interface PurchaseInput {
  number: string;
  type?: NumberType;
  call_flow_id?: string;
  message_flow_id?: string;
  name?: string;
  detail?: string;
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === '23505';
}

/** The number's type, from `type` or its prefix; 400 when the number does not fit the type. */
export function classifyNumber(number: string, type?: NumberType): NumberType {
  const t: NumberType = type ?? (isVirtualNumber(number) ? 'virtual' : 'normal');
  if (t === 'virtual') {
    const problem = virtualNumberProblem(number);
    if (problem) throw invalidArgument(`number: ${problem}`, [{ field: 'number' }]);
  } else {
    if (!isE164(number)) throw invalidArgument('number: must be E.164 (+, country code, digits)', [{ field: 'number' }]);
    if (isVirtualNumber(number)) throw invalidArgument('number: +899 numbers are virtual', [{ field: 'number' }]);
  }
  return t;
}

export async function purchaseNumber(db: Db, inventory: NumberInventory, customerId: string, input: PurchaseInput): Promise<NumberRow> {
  const type = classifyNumber(input.number, input.type);
  const callFlowId = input.call_flow_id || EMPTY_UUID;
  const messageFlowId = input.message_flow_id || EMPTY_UUID;
  let providerId = EMPTY_UUID;
  if (type === 'normal') {
    const customer = await db('customers').where({ id: customerId }).first('identity_verification_status');
    if (customer?.identity_verification_status !== 'verified') {
      throw new ApiError('IDENTITY_VERIFICATION_REQUIRED', 'buying a normal number needs a verified identity');
    }
    const entry = inventory.find(input.number);
    if (!entry) throw invalidArgument('number: not in the available inventory (see GET /available_numbers)', [{ field: 'number' }]);
    providerId = entry.provider_id;
  }
  await assertFlowRef(db, customerId, callFlowId, 'call_flow_id');
  await assertFlowRef(db, customerId, messageFlowId, 'message_flow_id');
  if ((await numbersRepo(db).taken([input.number])).size > 0) throw alreadyExists('number is already in use');
  if (type === 'normal') await assertAffordable(db, customerId, numberPrice('number'));

  try {
    return await inTransaction(db, async (trx) => {
      const now = clock.now();
      const row = await numbersRepo(trx).create({
        customer_id: customerId,
        number: input.number,
        type,
        provider_id: providerId,
        call_flow_id: callFlowId,
        message_flow_id: messageFlowId,
        name: input.name ?? '',
        detail: input.detail ?? '',
        tm_purchase: now,
        tm_renew: type === 'normal' ? now : null,
      });
      if (type === 'normal') await chargeNumber(trx, { customerId, numberId: row.id, kind: 'number' });
      return row;
    });
  } catch (e) {
    // Two buyers raced for the same number: the partial unique index decided.
    if (isUniqueViolation(e)) throw alreadyExists('number is already in use');
    throw e;
  }
}

/**
 * Renews the customer's normal numbers last renewed at or before `before` (optionally only `ids`),
 * charging each; all or nothing (402 renews none).
 */
export async function renewNumbers(db: Db, customerId: string, before: Date, ids?: string[]): Promise<NumberRow[]> {
  return inTransaction(db, async (trx) => {
    const due = await numbersRepo(trx).dueForRenewal(customerId, before, ids);
    if (due.length === 0) return [];
    await assertAffordable(trx, customerId, due.length * numberPrice('number_renew'));
    const now = clock.now();
    const out: NumberRow[] = [];
    for (const n of due) {
      await chargeNumber(trx, { customerId, numberId: n.id, kind: 'number_renew', renewalKey: now.toISOString() });
      const updated = await numbersRepo(trx).update(n.id, { tm_renew: now });
      if (updated) out.push(updated);
    }
    return out;
  });
}

/** `count` virtual numbers nobody owns, generated here (no inventory for +899). */
export async function availableVirtualNumbers(db: Db, count: number): Promise<AvailableNumber[]> {
  const out = new Map<string, AvailableNumber>();
  for (let round = 0; round < 5 && out.size < count; round++) {
    const batch = new Set<string>();
    while (batch.size < (count - out.size) * 2) batch.add(randomVirtualNumber());
    const taken = await numbersRepo(db).taken([...batch]);
    for (const number of batch) {
      if (out.size >= count) break;
      if (!taken.has(number) && !out.has(number)) out.set(number, { number, country: '899', region: '', postal_code: '', features: ['voice'] });
    }
  }
  return [...out.values()];
}
