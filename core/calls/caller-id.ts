/**
 * Caller id: the source a PSTN leg goes out with. One rule for every path that dials a number for a
 * customer (control-api planLegs for POST /calls, /groupcalls, /providercalls and campaigns; media-app
 * outbound/targets.ts for every leg the node dials: flow `connect`/`call`, an extension or trunk
 * calling a number, queue rings, agent addresses, transfer and REFER targets, AI tools that dial).
 *
 * 1. The source is kept when it is an active normal number of the customer (a +899 virtual number
 *    never is a PSTN source).
 * 2. Forwarding: a leg of an inbound call that came from the PSTN (a provider's INVITE) may keep that
 *    call's caller number, and only that number (`inboundCaller`): the carrier asserted it, so
 *    forwarding the call shows the original caller as a carrier would. Nothing else is presented:
 *    not a caller of another call, not a number a trunk or an extension put in From.
 * 3. Otherwise the outbound config's default_outgoing_source_number_id, when it is an active normal
 *    number of the customer, replaces the source (the name, target_name, is kept).
 * 4. Otherwise the leg is refused (POST /calls: 400; media-app: data.dial_refused source_not_allowed,
 *    nothing is sent).
 */
import type { Db } from '../db/knex';
import { EMPTY_UUID } from '../ids';
import { isE164, isVirtualNumber } from '../numbers/e164';
import type { Address } from '../repos/calls';

export type CallerId = { ok: true; source: Address; replaced: boolean } | { ok: false; issue: string };

export interface CallerIdOptions {
  /**
   * The outbound config's default_outgoing_source_number_id (pass it when it was read already);
   * undefined reads the customer's config (the oldest live one, as POST /calls uses).
   */
  defaultNumberId?: string | null;
  /** The caller number of the inbound PSTN call this leg belongs to (rule 2). */
  inboundCaller?: Address | null;
}

/** The address fields a source keeps (nothing else the caller sent rides along). */
export function cleanAddress(a: Address): Address {
  const out: Address = { type: a.type, target: a.target };
  if (a.target_name !== undefined) out.target_name = a.target_name;
  if (a.name !== undefined) out.name = a.name;
  if (a.detail !== undefined) out.detail = a.detail;
  return out;
}

async function ownedNormalNumber(db: Db, customerId: string, where: { id?: string; number?: string }): Promise<{ id: string; number: string } | null> {
  const row = await db('numbers')
    .where({ ...where, customer_id: customerId, type: 'normal', status: 'active' })
    .whereNull('tm_delete')
    .first('id', 'number');
  return (row as { id: string; number: string } | undefined) ?? null;
}

async function defaultNumberIdOf(db: Db, customerId: string): Promise<string | null> {
  const row = (await db('outbound_configs')
    .where({ customer_id: customerId })
    .whereNull('tm_delete')
    .orderBy([{ column: 'tm_create' }, { column: 'id' }])
    .first('default_outgoing_source_number_id')) as { default_outgoing_source_number_id: string | null } | undefined;
  return row?.default_outgoing_source_number_id ?? null;
}

const isTel = (a: Address | null | undefined, target: string): boolean => a?.type === 'tel' && a.target === target;

/** The source a PSTN leg of `customerId` goes out with, or why it cannot go out (see the file comment). */
export async function pstnCallerId(db: Db, customerId: string, source: Address | null | undefined, opts: CallerIdOptions = {}): Promise<CallerId> {
  const src: Address = source ? cleanAddress(source) : { type: '', target: '' };
  const virtual = src.type === 'tel' && isVirtualNumber(src.target);
  if (src.type === 'tel' && !virtual && src.target) {
    if (isE164(src.target) && (await ownedNormalNumber(db, customerId, { number: src.target }))) return { ok: true, source: src, replaced: false };
    // as the carrier delivered it (a carrier may send it without the +)
    if (isTel(opts.inboundCaller, src.target)) return { ok: true, source: src, replaced: false };
  }
  const fallbackId = opts.defaultNumberId !== undefined ? opts.defaultNumberId : await defaultNumberIdOf(db, customerId);
  if (fallbackId && fallbackId !== EMPTY_UUID) {
    const n = await ownedNormalNumber(db, customerId, { id: fallbackId });
    if (n) return { ok: true, source: { ...src, type: 'tel', target: n.number }, replaced: true };
  }
  return {
    ok: false,
    issue: virtual
      ? 'a virtual number (+899) cannot be the source of a PSTN call'
      : 'must be an active normal number of this customer for a PSTN destination (no default_outgoing_source_number_id to fall back to)',
  };
}
