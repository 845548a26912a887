/**
 * How a call ends when its party is gone without a word (issue "Dead peers end", docs/reliability.md):
 * its session timer ran out (session-timer.ts) or it sent no RTP or RTCP for MEDIA_INACTIVITY_TIMEOUT_MS
 * (media-engine's receive watch, CallEndpoint.watchRx). Either way the close is the far end's (hangup_by
 * remote: the party that died) with its own cause, our BYE carries a Reason, and the calls on its other
 * side (its chained legs, the call bridged to it) get the same Reason on their BYE (close-reason.ts).
 */
import type { RxTimeoutEvent } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { CloseReason } from './session-types';
import { SESSION_EXPIRED_REASON } from './session-timer';

/** The BYE's Reason of a call whose party sent no RTP or RTCP for the timeout. */
export const MEDIA_TIMEOUT_REASON = 'SIP;cause=408;text="Media timeout"';

export function sessionExpired(why: string): CloseReason {
  return { cause: 'session_expired', by: 'remote', why: `session_expired: ${why}`, reasonHeader: SESSION_EXPIRED_REASON };
}

export function mediaTimedOut(e: RxTimeoutEvent): CloseReason {
  return { cause: 'media_timeout', by: 'remote', why: `media_timeout: no RTP or RTCP for ${e.silentMs} ms`, reasonHeader: MEDIA_TIMEOUT_REASON };
}

/** Arms the endpoint's receive watch for `ms` (0 or unset: off). */
export function watchParty(ep: CallEndpoint, ms: number | undefined): void {
  if (ms && ms > 0 && !ep.destroyed) ep.watchRx(ms).catch(() => undefined);
}
