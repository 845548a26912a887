/**
 * The one primitive that sends an INVITE of this node (UAC): the dialler's attempts (dialer.ts) and
 * the node-to-node conference leg (xnode/leg.ts) both go through it. It knows nothing of calls: the
 * caller says where (Request-URI, next hop, digest credentials if any), what (our SDP, headers), and
 * what it wants to hear of the transaction (the request as sent: to CANCEL it; its Call-ID; 180/183).
 * A final non-2xx rejects with the error drachtio-srf gives (its `status` is the SIP status).
 * With `sessionTimer`, the INVITE offers an RFC 4028 session timer (Supported: timer, Session-Expires,
 * Min-SE: kit/sip-session-timer.ts) and a 422 is retried once with the Min-SE it gives.
 */
import type { Srf, SrfDialog, SrfSentInvite } from '../kit/srf';
import { injectContext } from '../../core/tracing';
import { SIP_TRACE_HEADER } from '../../core/sip/trace-header';
import { minSeOf, offerHeaders, type SessionTimerSettings } from '../kit/sip-session-timer';

export interface UacTarget {
  uri: string;
  /** Next hop when it differs from the Request-URI host. */
  proxy?: string;
  /** Digest credentials for a 401/407; none: a challenge fails the INVITE. */
  auth?: { username: string; password: string };
}

export interface UacRequest {
  localSdp: string;
  headers?: Record<string, string>;
  /** The INVITE as sent: it can be cancelled until a final response. */
  onRequest?(req: SrfSentInvite): void;
  /** The INVITE's Call-ID (the timeline's SIP ladder finds the captured messages by it). */
  onCallId?(sipCallId: string): void;
  /** A provisional response (180, 183 ...). */
  onProvisional?(status: number): void;
  /** Offer a session timer on these terms (SESSION_EXPIRES_SEC, SESSION_MIN_SE_SEC). */
  sessionTimer?: SessionTimerSettings;
}

/** The Min-SE to retry with after a 422 (0: not a 422 worth a retry). */
function minSeToRetry(err: unknown, s: SessionTimerSettings): number {
  const e = err as { status?: number; res?: { get(n: string): string | undefined; has(n: string): boolean } };
  if (e?.status !== 422 || !e.res) return 0;
  const min = minSeOf(e.res);
  return min > s.minSeSec && min <= 86_400 ? min : 0;
}

/** The request's headers with the session timer's offer (Supported joined to one the caller gave). */
function withTimer(headers: Record<string, string>, offer: Record<string, string>): Record<string, string> {
  const supported = headers.Supported ? `${headers.Supported}, ${offer.Supported}` : offer.Supported;
  return { ...headers, ...offer, ...(supported ? { Supported: supported } : {}) };
}

/**
 * Sends the INVITE; resolves with the dialog once answered. The active trace context (the call's
 * span) goes to sip-server as X-Openvoice-Traceparent, which parents the INVITE's client span on it
 * and removes the header before the wire (sip-server/drachtio/trace.ts); none when tracing is off.
 */
export async function sendInvite(srf: Srf, target: UacTarget, r: UacRequest): Promise<SrfDialog> {
  if (!r.sessionTimer) return inviteOnce(srf, target, r, r.headers ?? {});
  const first = { callId: '', cseq: Number.NaN };
  const sent = (req: SrfSentInvite) => Object.assign(first, { callId: req.get('Call-ID') ?? '', cseq: Number.parseInt(req.get('CSeq') ?? '', 10) });
  try {
    return await inviteOnce(srf, target, r, withTimer(r.headers ?? {}, offerHeaders(r.sessionTimer)), sent);
  } catch (err) {
    const minSe = minSeToRetry(err, r.sessionTimer);
    if (!minSe) throw err;
    // RFC 4028 6: the same call again (its Call-ID, the next CSeq), asking for at least the Min-SE given
    const same: Record<string, string> = first.callId && Number.isInteger(first.cseq) ? { 'Call-ID': first.callId, CSeq: `${first.cseq + 1} INVITE` } : {};
    return inviteOnce(srf, target, r, { ...withTimer(r.headers ?? {}, offerHeaders(r.sessionTimer, minSe)), ...same });
  }
}

function inviteOnce(srf: Srf, target: UacTarget, r: UacRequest, given: Record<string, string>, sent?: (req: SrfSentInvite) => void): Promise<SrfDialog> {
  const { traceparent } = injectContext();
  const headers = traceparent ? { ...given, [SIP_TRACE_HEADER]: traceparent } : given;
  return srf.createUAC(
    target.uri,
    { localSdp: r.localSdp, ...(target.proxy ? { proxy: target.proxy } : {}), ...(target.auth ? { auth: target.auth } : {}), headers },
    {
      cbRequest: (_err: unknown, req: SrfSentInvite) => {
        if (!req) return;
        sent?.(req);
        r.onRequest?.(req);
        const sipCallId = r.onCallId && req.get('Call-ID');
        if (sipCallId) r.onCallId?.(sipCallId);
      },
      ...(r.onProvisional ? { cbProvisional: (res: { status: number }) => r.onProvisional?.(res.status) } : {}),
    },
  );
}
