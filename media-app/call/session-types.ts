/** The typed surface of a CallSession (session.ts): its events and why it closes. */
import type { CallStatus, HangupCause } from '../../core/calls/model';
import type { CallRow } from '../../core/repos/calls';
import type { SrfRequest, SrfResponse } from '../kit/srf';
import type { IncomingOffer } from './offer';

export interface HangupEvent {
  /**
   * Why the session closed (a CloseReason's `why`, e.g. 'remote_bye', 'media_gone', or
   * 'media_relay_gone: <why>' when its rtpengine relay leg died: rtpengine unreachable, the call lost).
   */
  reason: string;
  by: 'local' | 'remote';
}

export interface CallSessionEvents {
  /** The status moved (after the write and its publish). */
  status: [status: CallStatus];
  dtmf: [digit: string];
  /** Closed: the hangup is written (once). */
  hangup: [ev: HangupEvent];
  error: [err: Error];
  /** Fields outside the status changed (mute, hold, recording): after the row is taken, before the publish. */
  updated: [fields: Partial<Omit<CallRow, 'status'>>];
}

/** Why a session closes. */
export interface CloseReason {
  /** The signalling cause the hangup row derives hangup_reason from. */
  cause: HangupCause;
  /** Who ended it: local closes tear the SIP side down; remote ones find it gone. */
  by: 'local' | 'remote';
  /** Free text for logs and the 'hangup' event. */
  why: string;
  /** Local only: pass through terminating/canceling first (an ordinary hangup), so hangup_by says local. */
  announce?: boolean;
  /** Final response for an inbound INVITE not answered yet (default 480). */
  sipStatus?: number;
  /** A Reason header value (RFC 3326) for our BYE, e.g. why a transfer hangs up a target it no longer needs. */
  reasonHeader?: string;
  /** The connection to sip-server dropped (sip-gone.ts): no BYE, CANCEL or final response can go, none is tried. */
  sipGone?: true;
}

/** A pending INVITE we sent: CANCEL goes through it. */
export interface PendingUac {
  cancel(): void;
  /** The callee is another call of this node (an internal call): nothing goes through sip-server. */
  readonly internal?: true;
}

/**
 * The SIP side of a call, one of: nothing sent or received yet (an outgoing call before its INVITE),
 * an incoming offer we may still answer or refuse (an INVITE, or an internal call's: offer.ts), our INVITE in flight (CANCEL goes through it), or
 * the dialog of the answered call.
 */
/**
 * What a session needs of the dialog of an answered call: a drachtio-srf dialog, or one side of an
 * internal call (outbound/internal.ts), which has no SIP transaction behind it.
 */
export interface CallDialog {
  readonly sip: { callId: string; localTag: string; remoteTag: string };
  readonly local: { uri: string; sdp: string };
  readonly remote: { uri: string; sdp: string };
  readonly connected: boolean;
  destroy(opts?: { headers: Record<string, string> }): Promise<void>;
  modify(sdp: string): Promise<string>;
  request(opts: { method: string; headers?: Record<string, string>; body?: string }): Promise<SrfResponse>;
  on(event: 'destroy', fn: () => void): unknown;
  on(event: 'modify', fn: (req: SrfRequest, res: SrfResponse) => void): unknown;
}

export type SipLeg = { kind: 'none' } | { kind: 'offered'; offer: IncomingOffer } | { kind: 'inviting'; invite: PendingUac } | { kind: 'up'; dialog: CallDialog };

/** The life of the session: live, closing (the cascade runs), closed (the hangup is written). */
export type Life = { phase: 'live' } | { phase: 'closing' | 'closed'; reason: CloseReason };
