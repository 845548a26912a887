// The SIP stack's public API types: its options, request options and typed events (stack.ts).
import type { Logger } from 'pino';
import type { SipRequest, SipResponse, SipUri } from './message';
import type { SipResolver, Target } from './transport';
import type { ServerTransaction } from './transaction/server';
import type { InviteServerTransaction } from './transaction/server-invite';
import type { SipCaptureHook } from './capture/capture';

export interface SipStackOptions {
  logger?: Logger;
  /** DNS for RFC 3263 NAPTR/SRV/A lookups; default: the servers of config.dns (else the system's) */
  resolver?: SipResolver;
  /** Sees every parsed message sent or received (the call's SIP ladder, sip-server/capture/). */
  capture?: SipCaptureHook;
}

export interface RequestOptions {
  /**
   * Explicit next hop: a SIP URI ("sip:10.0.0.5:5080;transport=tcp"), "host[:port]", or a Target.
   * Default: the first Route when it is a loose router, else the Request-URI.
   */
  target?: string | SipUri | Target;
}

/**
 * Events:
 * - 'request' (req, srv): a new request (not ACK, not a CANCEL that matched an INVITE). req.source is set;
 *   the top Via already carries received/rport. Respond with srv.respond(res).
 * - 'ack' (ack, srv?): an ACK for a 2xx (ACKs for non-2xx are absorbed by their transaction).
 *   srv is the INVITE server transaction it acknowledges when still known; retransmitted ACKs
 *   for a known transaction are not re-emitted.
 * - 'cancel' (cancel, srv): a CANCEL matched INVITE server transaction srv. The stack has answered
 *   the CANCEL 200 and, unless a final response had been sent, the INVITE 487 (srv then emits 'cancelled').
 * - 'response' (res): a response matching no client transaction (e.g. a 2xx retransmission after
 *   Timer M, or responses to requests sent with sendStateless()).
 * - 'error' (err): a listening socket failed.
 */
export interface SipStackEvents {
  request: [req: SipRequest, srv: ServerTransaction];
  ack: [ack: SipRequest, srv: InviteServerTransaction | undefined];
  cancel: [cancel: SipRequest, srv: InviteServerTransaction];
  response: [res: SipResponse];
  error: [err: Error];
}
