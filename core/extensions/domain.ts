/**
 * Registration domains: every customer gets one short random label, and its extensions register at
 * `{label}.reg.{SIP_DOMAIN}` (VoIPbin moved from `{customer_uuid}.registrar…` to 4-character base36
 * labels to keep INVITEs under the MTU). The label never changes once given.
 */
import { randomInt } from 'node:crypto';
import type { Db } from '../db/knex';
import { customerDomainsRepo } from '../repos/extensions';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const LABEL_LENGTH = 4;

export function randomLabel(length = LABEL_LENGTH): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

export function registrationDomain(label: string, sipDomain: string): string {
  return `${label}.reg.${sipDomain}`;
}

/** The label of `{label}.reg.{sipDomain}`, or null when `domain` is not a registration domain. */
export function labelOf(domain: string, sipDomain: string): string | null {
  const suffix = `.reg.${sipDomain}`.toLowerCase();
  const d = domain.toLowerCase();
  if (!d.endsWith(suffix)) return null;
  const label = d.slice(0, -suffix.length);
  return /^[a-z0-9]{1,16}$/.test(label) ? label : null;
}

/** The customer's label, created on first use; retries on the (rare) collision with another customer's label. */
export async function ensureCustomerLabel(db: Db, customerId: string): Promise<string> {
  const repo = customerDomainsRepo(db);
  for (let attempt = 0; attempt < 20; attempt++) {
    const existing = await repo.getLabel(customerId);
    if (existing) return existing;
    // After a few collisions the 4-character space is crowded: widen it.
    await repo.tryInsert(customerId, randomLabel(attempt < 10 ? LABEL_LENGTH : LABEL_LENGTH + 2));
  }
  throw new Error('could not allocate a registration domain label');
}
