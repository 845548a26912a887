// INVITE client transaction (RFC 3261 17.1.1 with the RFC 6026 Accepted state).
//   Calling -(1xx)-> Proceeding -(3xx-6xx, ACK sent)-> Completed -(D)-> Terminated
//           -(2xx)-----------------------------------> Accepted -(M)-> Terminated
// Timer A retransmits over UDP, Timer B gives up in Calling.
import { Headers, SipRequest, SipResponse } from '../message';
import { ClientTransaction } from './client';
import type { AckTarget, TransactionContext } from './context';
import { INVITE_CLIENT, type InviteClientState } from './states';

export interface InviteClientHooks {
  /** Send a CANCEL as its own non-INVITE client transaction. */
  sendCancel(cancel: SipRequest): ClientTransaction;
  /** Send an ACK for a 2xx statelessly (a new transaction per RFC 3261 17.1.1.3 / 13.2.2.4). */
  sendAck(ack: SipRequest, target?: AckTarget): void;
}

export class InviteClientTransaction extends ClientTransaction<InviteClientState> {
  readonly isInvite = true;
  private ackForNon2xx?: SipRequest;
  private acks = new Map<string, { ack: SipRequest; target?: AckTarget }>();
  /** The CANCEL asked for (held in Calling until a provisional response arrives). */
  private cancelRequest?: SipRequest;
  private cancelSent = false;

  constructor(
    id: string,
    request: SipRequest,
    ctx: TransactionContext,
    private readonly hooks: InviteClientHooks,
  ) {
    super(id, request, ctx, { name: 'INVITE client transaction', table: INVITE_CLIENT, initial: 'Calling' });
  }

  protected start(): void {
    const t = this.ctx.timers;
    this.transmit();
    if (!this.reliable) this.timerA(t.t1);
    this.timers.start('B', 64 * t.t1, () => {
      if (this.state !== 'Calling') return;
      this.emit('timeout');
      this.terminate();
    });
  }

  /** Timer A: T1, 2T1, 4T1 ... (no cap for INVITE, bounded by Timer B). */
  private timerA(interval: number): void {
    this.timers.start('A', interval, () => {
      if (this.state !== 'Calling') return;
      this.transmit(true);
      this.timerA(2 * interval);
    });
  }

  receiveResponse(res: SipResponse): void {
    const t = this.ctx.timers;
    switch (this.state) {
      case 'Calling':
      case 'Proceeding':
        if (res.status < 200) {
          if (this.state === 'Calling') this.transition('Proceeding');
          this.timers.stop('A');
          this.timers.stop('B');
          this.sendCancel();
          this.emit('provisional', res);
          return;
        }
        this.timers.stop('A');
        this.timers.stop('B');
        this.timers.stop('C');
        this.finalResponse = res;
        if (res.status < 300) {
          this.transition('Accepted');
          this.timers.start('M', 64 * t.t1, () => this.terminate());
        } else {
          this.transition('Completed');
          this.ackForNon2xx = this.buildAck(res);
          this.ctx.send(this.ackForNon2xx, this.destination).catch(() => undefined);
          // Timer D: >= 32 s on UDP; 64*T1 is exactly 32 s at the default T1 and scales down in tests
          this.timers.start('D', this.reliable ? 0 : 64 * t.t1, () => this.terminate());
        }
        this.emit('final', res);
        return;
      case 'Completed':
        // retransmitted non-2xx final: resend the ACK
        if (res.status >= 300 && this.ackForNon2xx) {
          this.ctx.onRetransmit(this.ackForNon2xx);
          this.ctx.send(this.ackForNon2xx, this.destination).catch(() => undefined);
        }
        return;
      case 'Accepted':
        if (res.status >= 200 && res.status < 300) {
          let tag: string | undefined;
          try {
            tag = res.toTag;
          } catch {
            /* malformed To already rejected by parser */
          }
          const sent = tag !== undefined ? this.acks.get(tag) : undefined;
          if (sent) {
            this.ctx.onRetransmit(sent.ack);
            this.hooks.sendAck(sent.ack, sent.target);
          }
          this.emit('additional-2xx', res);
        }
        return;
      default:
    }
  }

  override ack(ack: SipRequest, target?: AckTarget): void {
    let tag: string | undefined;
    try {
      tag = ack.toTag;
    } catch {
      /* ignore */
    }
    if (tag !== undefined) this.acks.set(tag, { ack, target });
    this.hooks.sendAck(ack, target);
  }

  /**
   * CANCEL this INVITE (RFC 3261 9.1). Returns the CANCEL: sent now, or, in Calling, held and sent
   * as it is when the first provisional response arrives. Undefined when none will be sent (one was
   * already, or a final response came, or the transaction ended). If no final response follows the
   * CANCEL within 64*T1 the transaction ends with 'timeout'.
   */
  override cancel(reason?: string): SipRequest | undefined {
    if (this.cancelRequest || this.finalResponse || this.state === 'Terminated') return undefined;
    this.cancelRequest = buildCancel(this.request, reason);
    if (this.state !== 'Calling') this.sendCancel();
    return this.cancelRequest;
  }

  private sendCancel(): void {
    if (!this.cancelRequest || this.cancelSent) return;
    this.cancelSent = true;
    this.hooks.sendCancel(this.cancelRequest);
    this.timers.start('C', 64 * this.ctx.timers.t1, () => {
      if (this.finalResponse) return;
      this.emit('timeout');
      this.terminate();
    });
  }

  /** ACK for a non-2xx final (17.1.1.3): same Request-URI, top Via, Route; To from the response. */
  private buildAck(res: SipResponse): SipRequest {
    return requestOfInvite(this.request, 'ACK', res.headers.get('To'));
  }
}

/**
 * The CANCEL of an INVITE (RFC 3261 9.1): the INVITE's Request-URI, top Via (same branch), Route,
 * From, To, Call-ID and CSeq number, method CANCEL; a Reason when given (RFC 3326). The one builder:
 * what the transaction sends is what the drachtio `Msg sent` echo carries.
 */
export function buildCancel(inv: SipRequest, reason?: string): SipRequest {
  const req = requestOfInvite(inv, 'CANCEL', null);
  if (reason) req.headers.append('Reason', reason);
  return req;
}

/**
 * What the ACK of a non-2xx and the CANCEL take of their INVITE: its Request-URI, top Via, Route,
 * From, Call-ID and CSeq number (with `method`), and its To unless `to` is given.
 */
function requestOfInvite(inv: SipRequest, method: 'ACK' | 'CANCEL', to: string | null | undefined): SipRequest {
  const h = new Headers();
  const via = inv.headers.get('Via');
  if (via) h.append('Via', via);
  for (const r of inv.headers.getAll('Route')) h.append('Route', r);
  h.append('Max-Forwards', '70');
  h.append('From', inv.headers.get('From') ?? '');
  h.append('To', to ?? inv.headers.get('To') ?? '');
  h.append('Call-ID', inv.callId);
  h.append('CSeq', `${inv.cseq.seq} ${method}`);
  return new SipRequest(method, inv.uri, h);
}
