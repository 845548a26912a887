/**
 * The account gate of the SIP side: a frozen, expired or deleted customer's phones and trunks get
 * no service (spec: the account status gate of the versioned API, applied to SIP). It is asked only
 * after the request authenticated (digest, trunk source address), so the answer (403 with a Warning
 * naming the state) is told to the account's own devices, never to a stranger. A customer row that is
 * gone counts as deleted. A failed lookup throws: the request fails with 500, it is not let through.
 */
import type { Db } from '../../core/db/knex';
import { customersRepo, isClosedStatus, type ClosedStatus, type CustomerStatus } from '../../core/repos/customers';
import type { SrfResponse } from '../kit/srf';

/** The customer's closed state, or null when it may use the platform (initial, active). */
export async function closedAccount(db: Db, customerId: string): Promise<ClosedStatus | null> {
  return standingOf((await customersRepo(db).statusOf(customerId))?.status ?? null);
}

/** closedAccount's answer from a customer's status already read (null: no customer row). */
export function standingOf(status: CustomerStatus | null): ClosedStatus | null {
  if (status === null) return 'deleted';
  return isClosedStatus(status) ? status : null;
}

/** 403 with a Warning (RFC 3261 20.43, code 399: miscellaneous) naming the account's state. */
export function refuseClosedAccount(res: SrfResponse, status: ClosedStatus): void {
  res.send(403, { headers: { Warning: `399 openvoice "account ${status}"` } });
}
