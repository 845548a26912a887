/**
 * What a call's close says to the far ends: the Reason header (RFC 3326) of our BYE, and the reason the
 * legs chained to the call are closed with. The closes themselves are the session's (session.ts).
 */
import type { CallDialog, CloseReason } from './session-types';

/**
 * A Reason header (RFC 3326) on our BYE when the closer gave one (a transfer), or when the media under
 * the call died (its relay leg or its endpoint), so the far end (e.g. the browser phone) can tell the
 * user why the call ended.
 */
export function byeReason(reason: CloseReason): { headers: Record<string, string> } | undefined {
  if (reason.reasonHeader) return { headers: { Reason: reason.reasonHeader.replace(/[\r\n]/g, ' ') } };
  if (!reason.why.startsWith(MEDIA_RELAY_GONE) && !reason.why.startsWith('media_gone')) return undefined;
  return { headers: { Reason: `SIP;cause=503;text="${reason.why.replace(/["\\\r\n]/g, ' ').slice(0, 120)}"` } };
}

/** The hangup reason (a CloseReason's `why` prefix) of a call whose rtpengine relay leg died under it. */
export const MEDIA_RELAY_GONE = 'media_relay_gone';

/** Our BYE, with its Reason; a dead party's is not waited for (it never answers: 32 s of retransmissions). */
export function sendBye(dialog: CallDialog, reason: CloseReason): Promise<void> {
  const sent = dialog.destroy(byeReason(reason)).catch(() => undefined);
  return partyDied(reason) ? Promise.resolve() : sent;
}

/** The party is presumed dead (no media, or its session timer ran out): the call ends for that. */
export const partyDied = (reason: CloseReason): boolean => reason.cause === 'media_timeout' || reason.cause === 'session_expired';

/** What the legs chained to a closing call get with their BYE: the dead party's Reason, else nothing. */
export function chainedReason(reason: CloseReason): Pick<CloseReason, 'reasonHeader'> {
  return partyDied(reason) ? { reasonHeader: reason.reasonHeader } : {};
}
