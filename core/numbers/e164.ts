/**
 * Phone number rules (spec conventions 6 and the Number resource): E.164 for every number; virtual
 * numbers are `+899` plus 9 digits (13 characters, VoIPbin's VirtualNumberPrefix/Length), with the
 * `+899000…` block reserved for the platform.
 */
import { randomInt } from 'node:crypto';

export const VIRTUAL_PREFIX = '+899';
export const VIRTUAL_LENGTH = 13;
export const VIRTUAL_RESERVED_PREFIX = '+899000';

/** `+`, a country code not starting with 0, 7 to 15 digits in all (ITU-T E.164 maximum 15). */
export function isE164(value: unknown): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{6,14}$/.test(value);
}

export function isVirtualNumber(value: string): boolean {
  return value.startsWith(VIRTUAL_PREFIX);
}

/** Why a virtual number is unacceptable for a customer, or null when it is fine. */
export function virtualNumberProblem(value: string): string | null {
  if (!value.startsWith(VIRTUAL_PREFIX)) return `a virtual number starts with ${VIRTUAL_PREFIX}`;
  if (value.length !== VIRTUAL_LENGTH || !/^\+\d+$/.test(value)) {
    return `a virtual number is ${VIRTUAL_PREFIX} followed by ${VIRTUAL_LENGTH - VIRTUAL_PREFIX.length} digits`;
  }
  if (value.startsWith(VIRTUAL_RESERVED_PREFIX)) return `the ${VIRTUAL_RESERVED_PREFIX} block is reserved`;
  return null;
}

/** A random virtual number outside the reserved block: +899 XXX YYYYYY with XXX in 001..999. */
export function randomVirtualNumber(): string {
  const block = String(randomInt(1, 1000)).padStart(3, '0');
  const line = String(randomInt(0, 1_000_000)).padStart(6, '0');
  return `${VIRTUAL_PREFIX}${block}${line}`;
}

/** Digits of an E.164 number without the `+` (route prefixes match against these). */
export function digitsOf(e164: string): string {
  return e164.startsWith('+') ? e164.slice(1) : e164;
}
