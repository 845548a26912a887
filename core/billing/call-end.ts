/**
 * The billing step of a call's end: what a call costs when it ends. Every path that ends a Call row
 * passes it to `callsRepo.hangup(id, cause, [chargeEndedCall])`, which runs it in the transaction that
 * writes the hangup, only when that write ended the row: a call is never ended without its charge, nor
 * charged twice (and the charge's idempotency key is the call id). The paths: media-app's session close
 * (media-app/call/session.ts), the node sweeper (core/calls/node-sweep.ts), control-api ending rows no
 * node holds (routes/calls.ts, routes/groupcalls.ts, campaigns/runner.ts) and media-app's groupcall
 * runner cancelling rows it never dialled (media-app/groupcall/runner.ts).
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
