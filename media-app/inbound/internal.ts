/**
 * An INVITE one of our media-app nodes sent to an own +899 virtual number (outbound/internal.ts):
 * its token must verify for the Request-URI's number and name a live outgoing call row of the
 * number's owner to that number. Then the call is the owner's, from the row's source.
 */
import type { Address, CallRow } from '../../core/repos/calls';
import { isVirtualNumber } from '../../core/numbers/e164';
import type { NumberRow } from '../../core/repos/numbers';
import type { CallDeps } from '../call/deps';
import type { SrfRequest } from '../srf';
import { INTERNAL_CALL_HEADER, verifyInternalCallToken } from '../outbound/internal';

export type InternalCaller = { customerId: string; source: Address; callId: string };

/** undefined: not an internal call (no token); null: a token that does not hold (refuse it). */
export async function internalCaller(deps: CallDeps, req: SrfRequest, number: NumberRow | null): Promise<InternalCaller | null | undefined> {
  const token = req.get(INTERNAL_CALL_HEADER);
  if (!token) return undefined;
  if (!number || !isVirtualNumber(number.number)) return null;
  const callId = verifyInternalCallToken(deps.config.jwtSecret, token, number.number);
  if (!callId) return null;
  const row = (await deps.db('calls').where({ id: callId }).first()) as CallRow | undefined;
  if (!row || row.direction !== 'outgoing' || row.status === 'hangup' || row.customer_id !== number.customer_id) return null;
  if (row.destination.type !== 'tel' || row.destination.target !== number.number) return null;
  return { customerId: row.customer_id, source: row.source, callId };
}
