/**
 * Calls to the customer's own +899 virtual numbers are routed internally (spec: virtual numbers "are
 * routed internally"): no provider, no SIP hop, no charge. The outgoing leg is joined to a new
 * incoming leg of the same customer to that number on this node, whose flow (the number's
 * call_flow_id) runs as it would for a call from outside. The two legs' media endpoints exchange
 * their SDP, so the audio between them is real RTP on loopback; the signalling between them is a
 * pair of in-process dialogs (what a BYE is to one side, `destroy`, is the other side's hangup).
 * The legs themselves are made and joined by the call core (media-app/call/internal-dial.ts).
 *
 * Why not an INVITE to our own sip-server: drachtio-server (and sip-server, which keeps its wire
 * behaviour) refuses a request whose next hop is itself ("can not send request to myself").
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Address } from '../../core/repos/calls';
import type { Db } from '../../core/db/knex';
import { EMPTY_UUID } from '../../core/ids';
import { ownVirtualNumber } from '../../core/calls/dial-policy';

/** One side of an internal call: the far end is another call on this node. */
export class InternalDialog extends EventEmitter {
  peer: InternalDialog | null = null;
  connected = true;
  constructor(
    readonly sip: { callId: string; localTag: string; remoteTag: string },
    readonly local: { uri: string; sdp: string },
    readonly remote: { uri: string; sdp: string },
  ) {
    super();
  }

  /** Our BYE: the other side sees the far end hang up. */
  async destroy(): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    const peer = this.peer;
    if (peer?.connected) {
      peer.connected = false;
      peer.emit('destroy');
    }
  }

  /** No re-INVITE crosses: the endpoints stay as they were joined. */
  async modify(): Promise<string> {
    return this.local.sdp;
  }

  async request(): Promise<never> {
    throw Object.assign(new Error('in-dialog requests are not carried on an internal call'), { status: 501 });
  }
}

/** The two sides of an internal call, each the other's far end: `a` and `b` are their SDPs. */
export function dialogPair(a: string, b: string): [InternalDialog, InternalDialog] {
  const callId = `internal-${randomUUID()}`;
  const [ta, tb] = [randomUUID().slice(0, 8), randomUUID().slice(0, 8)];
  const uri = `sip:${callId}@internal`;
  const da = new InternalDialog({ callId, localTag: ta, remoteTag: tb }, { uri, sdp: a }, { uri, sdp: b });
  const db = new InternalDialog({ callId, localTag: tb, remoteTag: ta }, { uri, sdp: b }, { uri, sdp: a });
  da.peer = db;
  db.peer = da;
  return [da, db];
}

/** The own +899 number a leg is addressed to and its flow, when the call is an internal one. */
export async function internalDestination(db: Db, customerId: string, dest: Address): Promise<{ number: string; flowId: string } | null> {
  if (dest.type !== 'tel') return null;
  const n = await ownVirtualNumber(db, customerId, (dest.target ?? '').trim());
  return n && n.call_flow_id && n.call_flow_id !== EMPTY_UUID ? { number: (dest.target ?? '').trim(), flowId: n.call_flow_id } : null;
}
