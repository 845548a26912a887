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

/**
 * The one decision of what a party that closed with `reason` tells the calls on its other side (the legs
 * chained to it, and the call bridged to it: bridge.ts): its Reason when it died (no media, its session
 * timer ran out), else nothing (a party that hung up, or was hung up, says nothing more).
 */
export function peerReason(reason: CloseReason | undefined): string | undefined {
  return reason && partyDied(reason) ? reason.reasonHeader : undefined;
}

/** What the legs chained to a closing call get with their BYE: the dead party's Reason, else nothing. */
export function chainedReason(reason: CloseReason): Pick<CloseReason, 'reasonHeader'> {
  const header = peerReason(reason);
  return header ? { reasonHeader: header } : {};
}

/**
 * The calls whose bridged party died and that have done nothing since (docs/reliability.md "Dead peers
 * end"): the Reason their own BYE carries when they end next (the flow's end after its connect, the
 * extension call's hangup, a relayed reason, the rule of a bridge that hangs the survivor up).
 */
const peerDied = new WeakMap<object, string>();

/** The party bridged to `call` left (bridge.ts, when the bridge ends): what it told `call`, if anything. */
export function notePeerLeft(call: object, header: string | undefined): void {
  if (header) peerDied.set(call, header);
  else peerDied.delete(call);
}

/** `call` went on to something else (a media operation, another bridge): its end is no longer its peer's. */
export function forgetPeer(call: object): void {
  peerDied.delete(call);
}

/** The Reason of `call`'s BYE for its dead peer, while it has done nothing since; else undefined. */
export function peerDiedReason(call: object): string | undefined {
  return peerDied.get(call);
}
