/**
 * The one primitive that sends an INVITE of this node (UAC): the dialler's attempts (dialer.ts) and
 * the node-to-node conference leg (xnode/leg.ts) both go through it. It knows nothing of calls: the
 * caller says where (Request-URI, next hop, digest credentials if any), what (our SDP, headers), and
 * what it wants to hear of the transaction (the request as sent: to CANCEL it; its Call-ID; 180/183).
 * A final non-2xx rejects with the error drachtio-srf gives (its `status` is the SIP status).
 */
import type { Srf, SrfDialog, SrfSentInvite } from '../srf';
import { injectContext } from '../../core/tracing';
import { SIP_TRACE_HEADER } from '../../core/sip/trace-header';

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
}

/**
 * Sends the INVITE; resolves with the dialog once answered. The active trace context (the call's
 * span) goes to sip-server as X-Openvoice-Traceparent, which parents the INVITE's client span on it
 * and removes the header before the wire (sip-server/drachtio/trace.ts); none when tracing is off.
 */
export function sendInvite(srf: Srf, target: UacTarget, r: UacRequest): Promise<SrfDialog> {
  const { traceparent } = injectContext();
  const headers = traceparent ? { ...r.headers, [SIP_TRACE_HEADER]: traceparent } : (r.headers ?? {});
  return srf.createUAC(
    target.uri,
    { localSdp: r.localSdp, ...(target.proxy ? { proxy: target.proxy } : {}), ...(target.auth ? { auth: target.auth } : {}), headers },
    {
      cbRequest: (_err: unknown, req: SrfSentInvite) => {
        if (!req) return;
        r.onRequest?.(req);
        const sipCallId = r.onCallId && req.get('Call-ID');
        if (sipCallId) r.onCallId?.(sipCallId);
      },
      ...(r.onProvisional ? { cbProvisional: (res: { status: number }) => r.onProvisional?.(res.status) } : {}),
    },
  );
}
