/**
 * How a call ends when its party is gone without a word (issue "Dead peers end", docs/reliability.md):
 * its session timer ran out (session-timer.ts) or it sent no RTP or RTCP for MEDIA_INACTIVITY_TIMEOUT_MS
 * (media-engine's receive watch, CallEndpoint.watchRx). Either way the close is the far end's (hangup_by
 * remote: the party that died) with its own cause, our BYE carries a Reason, and the calls on its other
 * side (its chained legs, the call bridged to it) get the same Reason on their BYE (close-reason.ts).
 */
import type { Logger } from 'pino';
import type { RxTimeoutEvent } from '../../media-engine';
import { platformMetrics } from '../../core/metrics';
import type { CallEndpoint } from '../media-server/endpoint';
import { MediaBackendUnsupported } from '../media-server/port';
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

/**
 * Arms the endpoint's receive watch for `ms` (0 or unset: off). A watch that cannot be armed (the media
 * backend refuses it, or it failed on a leg still up) leaves the call up without it: never silently, it is
 * logged at error with the call and counted (media_watch_unarmed_total{reason}); the call is not ended for
 * it (its party may be well).
 */
export function watchParty(ep: CallEndpoint, ms: number | undefined, log: { logger: Logger; call: string }): void {
  if (!ms || ms <= 0 || ep.destroyed) return;
  ep.watchRx(ms).catch((err: unknown) => {
    if (ep.destroyed) return;
    const reason = err instanceof MediaBackendUnsupported ? 'unsupported' : 'failed';
    platformMetrics.mediaWatchUnarmed.labels(reason).inc();
    log.logger.error({ call: log.call, reason, err: err instanceof Error ? err.message : String(err) }, 'media timeout watch not armed: a party that dies mid-call will not end this call');
  });
}
