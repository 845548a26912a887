/**
 * What the drachtio layer needs from the SIP stack, in its own words. stack-adapter.ts maps the
 * stack facade (sip-server/stack.ts) onto it, so the drachtio layer depends on a handful of
 * operations only. The transaction events follow the stack's transaction layer (RFC 3261 17 with
 * the RFC 6026 Accepted states): the stack retransmits our 2xx until the ACK, re-sends our ACK on a
 * retransmitted 2xx, answers CANCEL (200, then 487 to the INVITE).
 */
import type { EventEmitter } from 'node:events';
import type { SipRequest, SipResponse, TransportName } from '../message';

export interface Endpoint {
  transport: TransportName;
  address: string;
  port: number;
  /** tcp/tls: the connection to reuse */
  connectionId?: string;
}

/**
 * A request received from the network, answered through its server transaction.
 * Events: 'ack' (SipRequest) for our 2xx; 'cancelled' (SipRequest) after the stack answered
 * the CANCEL and sent 487 (only before a final response); 'timeout' () when no ACK came for a final response.
 */
export interface InboundTransaction extends EventEmitter {
  /**
   * Throws once the transaction has settled: a non-INVITE after its final response, an INVITE once
   * the ACK is in. Whoever needs the request later keeps it.
   */
  readonly request: SipRequest;
  /** true once a final response went out */
  readonly finalSent: boolean;
  /**
   * false when the state forbids it (e.g. after the automatic 487 of a CANCEL). A proxy passes
   * retransmit2xx:false: the 2xx it forwards is retransmitted by the UAS downstream, not by us.
   */
  respond(res: SipResponse, opts?: { retransmit2xx?: boolean }): boolean;
  /** where responses go */
  readonly destination: Endpoint;
}

/**
 * A request we sent. Events: 'provisional' (res), 'final' (res), 'additional-2xx' (res) for a
 * retransmitted or forked 2xx, 'timeout' (), 'transport-error' (Error).
 */
export interface OutboundTransaction extends EventEmitter {
  /** the request as put on the wire (our Via on top) */
  readonly request: SipRequest;
  readonly destination: Endpoint;
}

export interface SipPortEvents {
  /** every new request a transaction did not absorb: out-of-dialog and in-dialog requests */
  request: [InboundTransaction];
  /** an ACK that matched no server transaction (late ACK for a 2xx) */
  ack: [SipRequest];
}

export interface SipPort extends EventEmitter<SipPortEvents> {
  /**
   * Send a request as a client transaction. The stack adds the top Via (branch) and picks the
   * destination from `dest`, else the first Route, else the Request-URI.
   */
  sendRequest(req: SipRequest, dest?: Endpoint): OutboundTransaction;
  /**
   * ACK a 2xx received on `tx` (the stack re-sends it if the 2xx is retransmitted), to `dest` when
   * given (the dialog's transport and connection), else by its Route/Request-URI.
   */
  sendAck(tx: OutboundTransaction, ack: SipRequest, dest?: Endpoint): void;
  /** Send a request outside any transaction (a proxied ACK for a 2xx), adding our Via */
  sendStateless(req: SipRequest, dest?: Endpoint): void;
  /** CANCEL the INVITE sent on `tx` (RFC 3261 9.1); returns the CANCEL as sent, undefined if too late */
  cancel(tx: OutboundTransaction, reason?: string): SipRequest | undefined;
  /** the address we send from with this transport */
  localFor(transport: TransportName): Endpoint | undefined;
  /** every listening address, for the authenticate reply */
  listeningPoints(): Endpoint[];
  /** the stack's RFC 3261 timer values (T1 paces reliable provisional responses) */
  timers(): { t1: number };
  /** true when host[:port] designates this server (loop prevention) */
  isLocal(host: string, port?: number): boolean;
  /**
   * Keep a TCP/TLS connection open however long it is idle while `key` holds it (a live dialog's
   * flow), until unpin with the same key; a no-op for other connections and ones already gone.
   */
  pin(connectionId: string, key: string): void;
  unpin(connectionId: string, key: string): void;
}
