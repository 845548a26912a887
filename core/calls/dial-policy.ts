/**
 * Dial policy: the one place every path that could send an INVITE for a customer asks first
 * (control-api POST /calls, /groupcalls, transfers and campaigns through planLegs; media-app through
 * outbound/targets.ts, which every originate, flow `connect`/`call` leg, groupcall leg, queue ring,
 * REFER target and SIP extension-to-tel call dials through).
 *
 * Toll fraud, for outbound tel (PSTN) destinations:
 *
 * - premium-rate prefixes: DIAL_BLOCKED_PREFIXES (comma-separated E.164 prefixes; replaces the
 *   default list below; empty means none) → refused whatever the whitelist says.
 * - the outbound config's destination_whitelist (countries; empty denies every PSTN destination).
 * - a concurrency cap on live outgoing PSTN calls per customer: customers.max_concurrent_pstn_calls,
 *   else DIAL_MAX_CONCURRENT_PSTN_CALLS (default 30; 0 refuses every PSTN call). A call is counted
 *   from its admission (data.pstn_admitted) until its row is hung up; admission takes a per-customer
 *   Postgres advisory lock, so concurrent admissions on any process cannot overshoot the cap.
 * +899 virtual numbers are internal: none of this applies to them.
 *
 * Balance: a chargeable destination (a PSTN number: call_pstn_outgoing) needs the balance to pay its
 * first minute (core/billing assertCallAffordable); extensions, agents, SIP URIs and +899 virtual
 * numbers are free. Virtual numbers: only the customer's own active +899 numbers can be dialled
 * (they run on the platform, see media-app/outbound/internal.ts); any other is number_not_found,
 * whoever owns it. SIP URIs: core/calls/sip-destination.ts (the egress policy). The caller id a PSTN
 * leg presents: core/calls/caller-id.ts (source_not_allowed).
 */
import type { Db } from '../db/knex';
import { isE164, isVirtualNumber } from '../numbers/e164';
import { ApiError } from '../errors';
import { assertCallAffordable } from '../billing/calls';
import { rates } from '../billing/rates';
import type { CostType } from '../repos/billings';
import { countryOf } from './country';

/**
 * Default premium-rate and high-cost prefixes (documented in docs/reliability.md):
 * NANP premium (900, 976), UK 09xx premium, International Premium Rate
 * Service (+979), the satellite and international-network codes as a class (+870 Inmarsat,
 * +881 GMSS incl. Iridium/Thuraya/Globalstar, +882/+883 international networks), and the premium
 * ranges of the larger European dialling plans (DE 0900/0137, FR 089x/08 9, IT 89x, ES 803/806/807/905,
 * NL 0906/0909, BE 090x, AT 0900/0930, CH 0900/0901/0906, IE 1520-1599, AU 1900).
 */
export const DEFAULT_BLOCKED_PREFIXES: readonly string[] = [
  '+1900',
  '+1976',
  '+4490',
  '+4491',
  '+4498',
  '+979',
  '+870',
  '+881',
  '+882',
  '+883',
  '+49900',
  '+49137',
  '+3389',
  '+3989',
  '+34803',
  '+34806',
  '+34807',
  '+34905',
  '+31906',
  '+31909',
  '+3290',
  '+43900',
  '+43930',
  '+41900',
  '+41901',
  '+41906',
  '+3531520',
  '+3531530',
  '+3531550',
  '+3531560',
  '+3531570',
  '+3531580',
  '+3531590',
  '+611900',
];

export const DEFAULT_MAX_CONCURRENT_PSTN_CALLS = 30;

export type DialRefusalReason =
  | 'invalid_number'
  | 'premium_rate_prefix'
  | 'destination_not_whitelisted'
  | 'concurrency_cap'
  | 'insufficient_balance'
  | 'number_not_found'
  | 'destination_not_allowed'
  /** The leg's source is no number the customer may present to the PSTN (core/calls/caller-id). */
  | 'source_not_allowed';

export interface DialRefusal {
  reason: DialRefusalReason;
  /** The blocked prefix (premium_rate_prefix). */
  prefix?: string;
  /** The destination's country, '' when unknown (destination_not_whitelisted). */
  country?: string;
  /** The cap and the live count at the time (concurrency_cap). */
  max?: number;
  live?: number;
  /** Why, in words safe to show the customer (insufficient_balance, destination_not_allowed, source_not_allowed). */
  message?: string;
}

let memo: { raw: string | undefined; list: string[] } | null = null;

/** The blocked prefixes in force (DIAL_BLOCKED_PREFIXES, else the defaults), longest first. */
export function blockedPrefixes(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.DIAL_BLOCKED_PREFIXES;
  if (memo && memo.raw === raw) return memo.list;
  const list = (raw === undefined ? [...DEFAULT_BLOCKED_PREFIXES] : raw.split(','))
    .map((p) => p.trim().replace(/[\s\-()]/g, ''))
    .filter((p) => /^\+?\d{1,15}$/.test(p))
    .map((p) => (p.startsWith('+') ? p : `+${p}`))
    .sort((a, b) => b.length - a.length);
  memo = { raw, list };
  return list;
}

/** The platform default cap (DIAL_MAX_CONCURRENT_PSTN_CALLS; invalid values fall back to the default). */
export function defaultMaxConcurrentPstn(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.DIAL_MAX_CONCURRENT_PSTN_CALLS;
  if (v === undefined || v.trim() === '') return DEFAULT_MAX_CONCURRENT_PSTN_CALLS;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_MAX_CONCURRENT_PSTN_CALLS;
}

/** A tel destination that leaves the platform (E.164, not a +899 virtual number). */
export function isPstnTarget(target: string): boolean {
  return isE164(target) && !isVirtualNumber(target);
}

export function isPstnAddress(a: { type?: string; target?: string } | null | undefined): boolean {
  return a?.type === 'tel' && isPstnTarget(a.target ?? '');
}

/**
 * The static checks of a tel destination (no I/O): a PSTN number must be E.164, outside the
 * blocked prefixes and in the whitelist. Virtual numbers pass.
 */
export function telRefusal(target: string, whitelist: readonly string[] | null | undefined): DialRefusal | null {
  if (!isE164(target)) return { reason: 'invalid_number' };
  if (isVirtualNumber(target)) return null;
  const prefix = blockedPrefixes().find((p) => target.startsWith(p));
  if (prefix) return { reason: 'premium_rate_prefix', prefix };
  const country = countryOf(target);
  if (!country || !(whitelist ?? []).includes(country)) return { reason: 'destination_not_whitelisted', country: country ?? '' };
  return null;
}

/** telRefusal against the customer's outbound config (the oldest live one, as POST /calls uses). */
export async function checkTelDestination(db: Db, customerId: string, target: string): Promise<DialRefusal | null> {
  const config = (await db('outbound_configs')
    .where({ customer_id: customerId })
    .whereNull('tm_delete')
    .orderBy([{ column: 'tm_create' }, { column: 'id' }])
    .first('destination_whitelist')) as { destination_whitelist: string[] } | undefined;
  return telRefusal(target, config?.destination_whitelist ?? []);
}

/** The customer's cap: its own max_concurrent_pstn_calls, else the platform default. */
export async function maxConcurrentPstn(db: Db, customerId: string): Promise<number> {
  const row = (await db('customers').where({ id: customerId }).first('max_concurrent_pstn_calls')) as { max_concurrent_pstn_calls: number | null } | undefined;
  const own = row?.max_concurrent_pstn_calls;
  return own === null || own === undefined ? defaultMaxConcurrentPstn() : own;
}

const ADMITTED = `(data->>'pstn_admitted') = 'true'`;

/** Live admitted outgoing PSTN calls of the customer. */
export async function livePstnCalls(db: Db, customerId: string): Promise<number> {
  const r = (await db('calls').where({ customer_id: customerId, direction: 'outgoing' }).whereNot({ status: 'hangup' }).whereRaw(ADMITTED).count('id as n')) as { n: string | number }[];
  return Number(r[0]?.n ?? 0);
}

/**
 * Admits outgoing PSTN call rows against the customer's cap, all or none: under the customer's
 * advisory lock, counts the live admitted calls (rows already admitted among `callIds` excluded and
 * passed again) and marks the rest admitted. Inside a caller's transaction (POST /calls) the lock
 * is held until that commits; otherwise it runs in its own.
 */
export async function admitPstnCalls(db: Db, customerId: string, callIds: string[]): Promise<DialRefusal | null> {
  if (!callIds.length) return null;
  const run = async (trx: Db): Promise<DialRefusal | null> => {
    await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [1310, customerId]);
    const pending = (await trx('calls').whereIn('id', callIds).whereNot({ status: 'hangup' }).whereRaw(`(data->>'pstn_admitted') is distinct from 'true'`).pluck('id')) as string[];
    if (!pending.length) return null;
    const [max, live] = await Promise.all([maxConcurrentPstn(trx, customerId), livePstnCalls(trx, customerId)]);
    if (live + pending.length > max) return { reason: 'concurrency_cap', max, live };
    await trx('calls')
      .whereIn('id', pending)
      .update({ data: trx.raw(`data || '{"pstn_admitted": true}'::jsonb`) });
    return null;
  };
  return 'isTransaction' in db && db.isTransaction ? run(db) : (db as import('knex').Knex).transaction(run);
}

/** Records why a call row was refused (data.dial_refused), for the call's record. */
export async function noteRefusal(db: Db, callId: string, refusal: DialRefusal): Promise<void> {
  await db('calls')
    .where({ id: callId })
    .update({ data: db.raw(`data || ?::jsonb`, [JSON.stringify({ dial_refused: refusal.reason })]) });
}

/** What a call to `a` costs per minute: PSTN numbers are charged, everything else is free. */
export function callCostType(a: { type?: string; target?: string }): Extract<CostType, 'call_pstn_outgoing' | 'call_vn' | 'call_extension'> | null {
  if (a.type === 'tel') return isPstnTarget(a.target ?? '') ? 'call_pstn_outgoing' : isVirtualNumber(a.target ?? '') ? 'call_vn' : null;
  if (a.type === 'extension') return 'call_extension';
  return null;
}

/**
 * insufficient_balance when a chargeable destination's first minute (times `legs`) is more than the
 * balance can pay, or the billing account is not active; free destinations always pass.
 */
export async function balanceRefusal(db: Db, customerId: string, dest: { type?: string; target?: string }): Promise<DialRefusal | null> {
  const cost = callCostType(dest);
  if (!cost || rates()[cost] <= 0) return null;
  try {
    await assertCallAffordable(db, customerId, cost);
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'INSUFFICIENT_BALANCE') return { reason: 'insufficient_balance', message: err.message };
    throw err;
  }
}

/** The customer's own active +899 number `number` (its call flow), else null: no other customer's number is told apart. */
export async function ownVirtualNumber(db: Db, customerId: string, number: string): Promise<{ id: string; call_flow_id: string } | null> {
  if (!isVirtualNumber(number)) return null;
  const row = (await db('numbers').where({ number, customer_id: customerId, status: 'active' }).whereNull('tm_delete').first('id', 'call_flow_id')) as { id: string; call_flow_id: string } | undefined;
  return row ?? null;
}
