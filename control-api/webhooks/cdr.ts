/**
 * The per-call CDR webhook (docs/observability.md): a customer whose metadata has `cdr_webhook: true`
 * (PUT /v1.0/customer/metadata) gets one `call_cdr` delivery per call when the call's `call_hangup`
 * event passes the webhook reader. The body's `data` is the call's export record (core/calls/cdr.ts).
 * It is an ordinary delivery row: same signing, egress policy, retries and per-customer order as
 * every other event. Its event id is derived from the call id, so a hangup event seen twice (a
 * redelivered stream entry, two publishers) still makes one delivery ((event_id, target) is unique).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../core/db/knex';
import type { PlatformEvent } from '../../core/events/bus';
import { cdrOfCall } from '../../core/calls/cdr';
import { isUuid } from '../../core/ids';

export const CDR_EVENT_TYPE = 'call_cdr';

/** The metadata flag that opts a customer in. */
export function cdrWebhookEnabled(metadata: unknown): boolean {
  return !!metadata && typeof metadata === 'object' && (metadata as Record<string, unknown>).cdr_webhook === true;
}

/** A UUID (version 8, name-based) that is the same for the same call, so the delivery is made once. */
export function cdrEventId(callId: string): string {
  const h = createHash('sha256').update(`call_cdr:${callId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The call_cdr message for a call_hangup event, or null when the call is not (or no longer) there. */
export async function cdrMessage(db: Db, e: PlatformEvent): Promise<{ eventId: string; body: string } | null> {
  const callId = e.data.id;
  if (e.event_type !== 'call_hangup' || !isUuid(callId)) return null;
  const cdr = await cdrOfCall(db, e.customer_id, callId);
  if (!cdr) return null;
  const body = JSON.stringify({ event_type: CDR_EVENT_TYPE, timestamp: e.timestamp, topic: `customer_id:${e.customer_id}:call:${callId}`, data: cdr });
  return { eventId: cdrEventId(callId), body };
}
