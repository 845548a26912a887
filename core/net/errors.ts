/**
 * The two ways an egress connection does not happen. Messages are safe to show a customer: they
 * never carry the remote server's answer, a resolved address, or which of "port closed",
 * "connection reset" and "no answer" happened (that would be a port-scan oracle).
 */
import type { AddressClass } from './address';

export type RefusalReason = 'url' | 'scheme' | 'credentials' | 'unresolvable' | 'self' | 'redirect' | Exclude<AddressClass, 'public'>;

/** The policy said no: the destination is not one the platform may connect to on a customer's behalf. */
export class EgressRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'EgressRefused';
  }
}

export type FailureReason = 'unreachable' | 'too-large' | 'too-many-redirects' | 'aborted';

/** The destination was allowed but the exchange did not complete. */
export class EgressFailed extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'EgressFailed';
  }
}

const ARTICLE: Partial<Record<RefusalReason, string>> = { unspecified: 'an', 'link-local': 'a', reserved: 'a' };

/** "a loopback address", "an unspecified address"... */
export function describeClass(k: Exclude<AddressClass, 'public'>): string {
  return `${ARTICLE[k] ?? 'a'} ${k} address`;
}
