// INVITE server transaction (RFC 3261 17.2.1 with the RFC 6026 Accepted state).
//   Proceeding -(3xx-6xx)-> Completed -(ACK)-> Confirmed -(I)-> Terminated
//              -(2xx)-----> Accepted -(L)-> Terminated
// Timer G retransmits non-2xx finals over UDP, Timer H gives up waiting for the ACK.
import type { SipRequest, SipResponse } from '../message';
import type { Destination, TransactionContext } from './context';
import { RespondOptions, ServerTransaction } from './server';
import { INVITE_SERVER, type InviteServerState } from './states';

export class InviteServerTransaction extends ServerTransaction<InviteServerState> {
  readonly isInvite = true;
  private acked = false;
  private cancelledBy?: SipRequest;

  /** True once the ACK for our 2xx has arrived. */
  get ackReceived(): boolean {
    return this.acked;
  }

  constructor(id: string, request: SipRequest, destination: Destination, ctx: TransactionContext) {
    super(id, request, destination, ctx, { name: 'INVITE server transaction', table: INVITE_SERVER, initial: 'Proceeding' });
  }

  /**
   * 100 (Trying) unless the TU answers first: RFC 3261 17.2.1 asks for it only when the TU will not
   * send a provisional or final response within 200 ms. Most INVITEs are answered sooner, and a 100
   * then costs a message (serialized, captured, sent) for nothing; one that waits longer gets it
   * after `ms`, still before the caller's first retransmission (T1, 500 ms).
   */
  tryingAfter(ms: number): void {
    if (this.state !== 'Proceeding' || this.lastResponse) return;
    this.timers.start('100', ms, () => {
      if (this.state === 'Proceeding' && !this.lastResponse) this.respond(this.request.makeResponse(100));
    });
  }

  respond(res: SipResponse, opts: RespondOptions = {}): boolean {
    const t = this.ctx.timers;
    this.timers.stop('100');
    if (this.state === 'Accepted' && res.status >= 200 && res.status < 300) {
      // a further 2xx (e.g. forked, forwarded by a proxy) is allowed in Accepted (RFC 6026 7.1)
      this.transmit(res);
      return true;
    }
    if (this.state !== 'Proceeding') return false;
    this.setLastResponse(res);
    this.transmit(res);
    if (res.status < 200) return true;
    this.emit('final', res);
    if (res.status < 300) {
      this.transition('Accepted');
      this.emit('accepted'); // internal: lets the stack route the 2xx ACK here
      if (!this.reliable && opts.retransmit2xx !== false) this.retransmit2xx(res, t.t1);
      this.timers.start('L', 64 * t.t1, () => {
        if (!this.acked && opts.retransmit2xx !== false) this.emit('timeout');
        this.terminate();
      });
    } else {
      this.transition('Completed');
      if (!this.reliable) this.retransmitFinal(res, t.t1);
      this.timers.start('H', 64 * t.t1, () => {
        this.emit('timeout');
        this.terminate();
      });
    }
    return true;
  }

  /** Timer G: T1, 2T1, 4T1 ... capped at T2. */
  private retransmitFinal(res: SipResponse, interval: number): void {
    this.timers.start('G', interval, () => {
      if (this.state !== 'Completed') return;
      this.transmit(res, true);
      this.retransmitFinal(res, Math.min(2 * interval, this.ctx.timers.t2));
    });
  }

  /** 2xx retransmission by the UAS core (RFC 3261 13.3.1.4), same schedule as Timer G. */
  private retransmit2xx(res: SipResponse, interval: number): void {
    this.timers.start('2xx', interval, () => {
      if (this.state !== 'Accepted' || this.acked) return;
      this.transmit(res, true);
      this.retransmit2xx(res, Math.min(2 * interval, this.ctx.timers.t2));
    });
  }

  receiveRequest(req: SipRequest): void {
    if (req.method === 'ACK') {
      if (this.state === 'Completed') {
        this.transition('Confirmed');
        this.timers.stop('G');
        this.timers.stop('H');
        this.timers.start('I', this.reliable ? 0 : this.ctx.timers.t4, () => this.terminate());
        this.settle();
      }
      return;
    }
    // INVITE retransmission: resend the last response (Proceeding, Completed, Accepted)
    if (this.state === 'Proceeding' || this.state === 'Completed' || this.state === 'Accepted') this.retransmitLast();
  }

  /** Internal: the ACK for a 2xx matched this transaction's dialog (the stack routes it here). */
  receiveAck2xx(ack: SipRequest): void {
    if (this.acked) return; // retransmitted ACKs are passed to the TU only once
    this.acked = true;
    this.timers.stop('2xx');
    this.emit('ack', ack);
    this.settle();
  }

  /**
   * Internal: a CANCEL matched. Before a final response it is answered 487 and 'cancelled' fires;
   * after one the CANCEL has no effect on the INVITE (RFC 3261 9.2).
   */
  receiveCancel(cancel: SipRequest): void {
    if (this.cancelledBy || this.state !== 'Proceeding') return;
    this.cancelledBy = cancel;
    // keep the To tag of an earlier provisional so the 487 belongs to the same early dialog
    let toTag: string | undefined;
    try {
      toTag = this.lastResponse?.toTag;
    } catch {
      /* none */
    }
    this.respond(this.request.makeResponse(487, undefined, { toTag }));
    this.emit('cancelled', cancel);
  }

  /** The CANCEL that cancelled this INVITE, if any. */
  get cancel(): SipRequest | undefined {
    return this.cancelledBy;
  }
}
