/**
 * What a call costs when it ends, charged in the transaction that writes its hangup (so a call is
 * never ended without its charge, nor charged twice: the charge's idempotency key is the call id).
 * Chargeable: an outgoing PSTN leg the dial policy admitted (`data.pstn_admitted`, set only for tel
 * destinations through providers) that was answered: its minutes from answer (tm_progressing) to
 * hangup, rounded up, at call_pstn_outgoing's rate, even into a negative balance (the call happened;
 * the first minute was checked before dialling). Everything else is free (docs/security.md).
 */
import type { Knex } from 'knex';
import { chargeCallMinutes } from './calls';

export interface EndedCall {
  id: string;
  customer_id: string;
  direction: string;
  data: Record<string, unknown> | null;
  tm_progressing: Date | null;
  tm_hangup: Date | null;
}

/** Seconds to charge, or null when the call costs nothing. */
export function chargeableSeconds(call: EndedCall): number | null {
  if (call.direction !== 'outgoing' || call.data?.pstn_admitted !== true) return null;
  if (!call.tm_progressing || !call.tm_hangup) return null;
  return Math.max(0, Math.ceil((call.tm_hangup.getTime() - call.tm_progressing.getTime()) / 1000));
}

/** Charges the ended call inside `trx` when it is chargeable; a no-op otherwise. */
export async function chargeEndedCall(trx: Knex.Transaction, call: EndedCall): Promise<void> {
  const seconds = chargeableSeconds(call);
  if (seconds === null || seconds === 0) return;
  await chargeCallMinutes(trx, { customerId: call.customer_id, callId: call.id, costType: 'call_pstn_outgoing', seconds });
}
