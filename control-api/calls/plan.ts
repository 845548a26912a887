/**
 * POST /calls before anything is written: each destination checked and turned into the Call row it
 * becomes, with the outbound config and source-number rules applied and the balance checked.
 *
 * - tel, PSTN (not +899): core/calls/dial-policy decides (403 PERMISSION_DENIED, details[0].reason
 *   premium_rate_prefix or destination_not_whitelisted): no blocked premium-rate prefix, and the
 *   country in destination_whitelist (empty list denies all); the source is held to the caller-id
 *   rule (core/calls/caller-id: an active normal number of the customer, else
 *   default_outgoing_source_number_id replaces it, else 400). Charged per minute: 402
 *   when the balance cannot pay one minute of every PSTN leg.
 * - tel, +899 virtual: internal, free, no whitelist; only the customer's own active numbers (else
 *   404 NUMBER_NOT_FOUND, the same answer whether nobody or another customer owns it).
 * - sip: a SIP URI whose host, as spelled, the egress policy allows (400 naming the field for a
 *   literal internal address: 127.1, [::1], localhost...; names are resolved and checked when the
 *   call is dialled, media-app/outbound/targets.ts); free. The config's codecs go to metadata.codecs.
 * - extension: target_name (else target) must be the `extension` of one of the customer's
 *   extensions (404) that is registered now (409 STATE_INVALID).
 * - agent: an agent of the customer (media-app rings the agent's addresses).
 * Other address types cannot be dialled here (400).
 */
import type { AppContext } from '../context';
import { ApiError, invalidArgument } from '../../core/errors';
import { isUuid } from '../../core/ids';
import { isE164, isVirtualNumber } from '../../core/numbers/e164';
import { assertAffordable, assertCallAffordable, rates } from '../../core/billing';
import { extensionsRepo } from '../../core/repos/extensions';
import { aorOf, isRegistered } from '../../core/registrar/bindings';
import type { Address } from '../../core/repos/calls';
import type { OutboundConfigRow } from '../../core/repos';
import { admitPstnCalls, isPstnAddress, ownVirtualNumber, telRefusal, type DialRefusal } from '../../core/calls/dial-policy';
import { sipLiteralRefusal } from '../../core/calls/sip-destination';
import { cleanAddress as clean, pstnCallerId } from '../../core/calls/caller-id';
import type { Db } from '../../core/db/knex';

export type Anonymous = 'yes' | 'no' | 'auto';

export interface PlannedLeg {
  source: Address;
  destination: Address;
  pstn: boolean;
  metadata: Record<string, unknown>;
}

const SIP_URI = /^(sips?:)?([^@\s;]+@)?[A-Za-z0-9.-]+(:\d{1,5})?(;[^\s]*)?$|^(sips?:)?([^@\s;]+@)?\[[0-9A-Fa-f:.]+\](:\d{1,5})?(;[^\s]*)?$/;

/** The source a PSTN leg goes out with (core/calls/caller-id), else 400 naming source.target. */
async function pstnSource(ctx: AppContext, customerId: string, source: Address, config: OutboundConfigRow | null): Promise<Address> {
  const r = await pstnCallerId(ctx.db, customerId, source, { defaultNumberId: config?.default_outgoing_source_number_id ?? null });
  if (r.ok) return r.source;
  throw invalidArgument(`source: ${r.issue}`, [{ field: 'source.target', issue: r.issue }]);
}

/** A refused tel destination as the API answers it. */
export function telRefused(at: string, index: number, r: DialRefusal): ApiError {
  const message =
    r.reason === 'premium_rate_prefix' ? `${at}: ${r.prefix} is a blocked premium-rate prefix` : `${at}: country ${r.country || 'unknown'} is not in the outbound config's destination_whitelist`;
  const detail: Record<string, unknown> = { field: `${at}.target`, index, reason: r.reason };
  if (r.prefix !== undefined) detail.prefix = r.prefix;
  if (r.reason === 'destination_not_whitelisted') detail.country = r.country ?? '';
  return new ApiError('PERMISSION_DENIED', message, { details: [detail] });
}

export async function planLegs(ctx: AppContext, customerId: string, source: Address, destinations: Address[]): Promise<PlannedLeg[]> {
  const config = await ctx.repos.outboundConfigs.getForCustomer(customerId);
  const whitelist = config?.destination_whitelist ?? [];
  const codecs = config?.codecs ?? '';
  const legs: PlannedLeg[] = [];
  for (const [i, d] of destinations.entries()) {
    const at = `destinations[${i}]`;
    const bad = (field: string, issue: string) => invalidArgument(`${at}.${field}: ${issue}`, [{ field: `${at}.${field}`, index: i, issue }]);
    switch (d.type) {
      case 'tel': {
        if (!isE164(d.target)) throw bad('target', 'must be an E.164 number (+ and 7 to 15 digits)');
        if (isVirtualNumber(d.target)) {
          if (!(await ownVirtualNumber(ctx.db, customerId, d.target))) {
            throw new ApiError('NUMBER_NOT_FOUND', `${at}: no such number`, { details: [{ field: `${at}.target`, index: i, issue: 'no such number' }] });
          }
          legs.push({ source: clean(source), destination: clean(d), pstn: false, metadata: {} });
          break;
        }
        const refusal = telRefusal(d.target, whitelist);
        if (refusal) throw telRefused(at, i, refusal);
        legs.push({ source: await pstnSource(ctx, customerId, source, config), destination: clean(d), pstn: true, metadata: {} });
        break;
      }
      case 'sip': {
        if (!SIP_URI.test(d.target)) throw bad('target', 'must be a SIP URI');
        const refused = sipLiteralRefusal(d.target, ctx.egress);
        if (refused && !refused.ok) throw bad('target', refused.message);
        legs.push({ source: clean(source), destination: clean(d), pstn: false, metadata: codecs ? { codecs } : {} });
        break;
      }
      case 'extension': {
        const key = (d.target_name ?? '').trim() || d.target.trim();
        if (!key) throw bad('target_name', 'is required (the extension to dial)');
        const ext = await extensionsRepo(ctx.db).getByExtension(customerId, key);
        if (!ext) {
          throw new ApiError('RESOURCE_NOT_FOUND', `${at}: no extension "${key}"`, { details: [{ field: `${at}.target_name`, index: i, issue: 'no such extension' }] });
        }
        if (!(await isRegistered(ctx.redis, ctx.config.redisKeyPrefix, aorOf(ext.username, ext.domain_name)))) {
          throw new ApiError('STATE_INVALID', `${at}: extension "${key}" is not registered`, { details: [{ field: `${at}.target_name`, index: i, issue: 'not registered' }] });
        }
        legs.push({ source: clean(source), destination: { ...clean(d), target: ext.extension, target_name: ext.extension }, pstn: false, metadata: codecs ? { codecs } : {} });
        break;
      }
      case 'agent': {
        if (!isUuid(d.target)) throw bad('target', 'must be an agent id (UUID)');
        const agent = await ctx.repos.agents.get(d.target, { customerId });
        if (!agent) throw new ApiError('RESOURCE_NOT_FOUND', `${at}: no agent ${d.target}`, { details: [{ field: `${at}.target`, index: i, issue: 'no such agent' }] });
        legs.push({ source: clean(source), destination: clean(d), pstn: false, metadata: {} });
        break;
      }
      default:
        throw bad('type', `type "${d.type}" cannot be dialled by POST /calls (tel, sip, extension or agent)`);
    }
  }
  const pstn = legs.filter((l) => l.pstn).length;
  if (pstn > 0) {
    await assertCallAffordable(ctx.db, customerId, 'call_pstn_outgoing');
    if (pstn > 1) await assertAffordable(ctx.db, customerId, rates().call_pstn_outgoing * pstn);
  }
  return legs;
}

/**
 * Admits the PSTN rows just written (inside the caller's transaction) against the customer's
 * concurrency cap; over it, 429 RATE_LIMIT_EXCEEDED (limited_by customer, limit concurrent_pstn_calls)
 * and the transaction rolls back, so nothing is dialled.
 */
export async function admitPstnLegs(trx: Db, customerId: string, rows: { id: string; destination: Address }[]): Promise<void> {
  const refusal = await admitPstnCalls(
    trx,
    customerId,
    rows.filter((r) => isPstnAddress(r.destination)).map((r) => r.id),
  );
  if (!refusal) return;
  throw new ApiError('RATE_LIMIT_EXCEEDED', `${refusal.live} outgoing PSTN calls are live; the cap is ${refusal.max}`, {
    details: [{ limited_by: 'customer', limit: 'concurrent_pstn_calls', max: refusal.max, live: refusal.live }],
    headers: { 'Retry-After': '5' },
  });
}
