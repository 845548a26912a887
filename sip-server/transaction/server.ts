// Server transactions (RFC 3261 17.2, RFC 6026): the common surface and the non-INVITE state machine.
import { EventEmitter } from 'node:events';
import { parseMessage, type SipRequest, type SipResponse } from '../message';
import { Destination, TimerSet, TransactionContext, isReliable } from './context';
import { NON_INVITE_SERVER, StateMachine, type InviteServerState, type NonInviteServerState, type Transitions } from './states';

export type ServerTransactionState = InviteServerState | NonInviteServerState;

/** A response we built and serialized, parsed again (no size limit: it was ours, of whatever size the stack allowed). */
function reparse(bytes: Buffer): SipResponse {
  return parseMessage(bytes, { mode: 'stream', maxMessageSize: bytes.length, maxHeaders: Infinity, maxHeaderLength: Infinity }) as SipResponse;
}

/** Events a settled transaction can no longer emit (it keeps 'transport-error', 'terminated', 'stateChanged'). */
const SETTLED_EVENTS = ['final', 'ack', 'cancelled', 'accepted', 'timeout'] as const;

/** The events of a server transaction (typed: `srv.on('ack', (ack) => ...)`). */
export interface ServerTransactionEvents {
  /** the first final response went out (the stack learns trusted sources from it) */
  final: [res: SipResponse];
  ack: [ack: SipRequest];
  cancelled: [cancel: SipRequest];
  /** INVITE: a 2xx went out (the stack routes the 2xx's ACK here) */
  accepted: [];
  timeout: [];
  'transport-error': [err: Error];
  terminated: [];
  /** every move of the state machine, after it happened */
  stateChanged: [to: ServerTransactionState, from: ServerTransactionState];
}

export interface RespondOptions {
  /**
   * INVITE 2xx over UDP: retransmit the 2xx (T1 doubling to T2) until the ACK arrives or Timer L
   * fires. This is the UAS core's duty (RFC 3261 13.3.1.4), done here so TUs need not; a proxy
   * forwarding a 2xx passes false. Default true.
   */
  retransmit2xx?: boolean;
}

/**
 * Events:
 * - 'ack' (ack: SipRequest): INVITE only: the ACK for our 2xx arrived (the ACK for a non-2xx is absorbed).
 * - 'cancelled' (cancel: SipRequest): INVITE only: a CANCEL matched before any final response; the
 *   stack already answered it 200 and the INVITE 487. (After a final response a CANCEL has no effect.)
 * - 'timeout' (): INVITE: no ACK arrived (Timer H for non-2xx, Timer L for 2xx). Non-INVITE: the TU
 *   gave no final response within 64*T1 (the client has given up by then, Timer F); the transaction ends.
 * - 'transport-error' (err: Error): a response could not be sent.
 * - 'terminated' (): the transaction is gone.
 * - 'final' (res): the first final response was sent.
 * - 'stateChanged' (to, from): every state move (through transition(), checked against the table).
 * A settled transaction (see settle()) emits only 'transport-error', 'terminated' and 'stateChanged'.
 */
export abstract class ServerTransaction<S extends ServerTransactionState = ServerTransactionState> extends EventEmitter<ServerTransactionEvents> {
  abstract readonly isInvite: boolean;
  private readonly machine: StateMachine<S>;
  protected readonly timers = new TimerSet();
  /** null once settled (see settle()) */
  private req: SipRequest | null;
  private lastRes?: SipResponse;
  /** the last response as it went on the wire: what a settled transaction resends */
  private lastBytes?: Buffer;
  private finalOut = false;

  constructor(
    /** Transaction key (branch + sent-by + method, or the RFC 2543 fallback). */
    readonly id: string,
    request: SipRequest,
    /** Where responses go (RFC 3261 18.2.2 / RFC 3581), computed from the request's Via and source. */
    readonly destination: Destination,
    protected readonly ctx: TransactionContext,
    machine: { name: string; table: Transitions<S>; initial: S },
  ) {
    super();
    this.req = request;
    this.machine = new StateMachine(machine.name, machine.table, machine.initial, () => (e) => this.ctx.onIllegalTransition?.(e), {
      moved: (to, from) => this.emit('stateChanged', to, from),
    });
  }

  get state(): S {
    return this.machine.state;
  }

  /** The one way the state changes: a move the machine's table allows (see states.ts for illegal ones). */
  protected transition(to: S): boolean {
    return this.machine.to(to);
  }

  /**
   * The request. A settled transaction has released it: reading it then is a programming error and
   * throws (its TU's work on it is over, see settle()).
   */
  get request(): SipRequest {
    if (!this.req) throw new Error(`server transaction ${this.id} has settled: its request is released`);
    return this.req;
  }

  /** False once the transaction has settled (see settle()). */
  get holdsRequest(): boolean {
    return this.req !== null;
  }

  /** The last response passed to respond(); a settled transaction parses it again from its bytes. */
  get lastResponse(): SipResponse | undefined {
    if (this.lastRes || !this.lastBytes) return this.lastRes;
    return reparse(this.lastBytes);
  }

  /** True once a final response has been passed to respond(). */
  get finalSent(): boolean {
    return this.finalOut;
  }

  /** Keep `res` as the response a retransmitted request is answered with. */
  protected setLastResponse(res: SipResponse): void {
    this.lastRes = res;
    this.lastBytes = undefined;
    if (res.status >= 200) this.finalOut = true;
  }

  /** Resend the last response (a retransmitted request matched). */
  protected retransmitLast(): void {
    if (this.lastRes) this.transmit(this.lastRes, true);
    else if (this.lastBytes) this.transmit(reparse(this.lastBytes), true);
  }

  /**
   * The TU's part is over (non-INVITE: the final response went out; INVITE: the ACK came): what is
   * left, absorbing retransmissions until Timer J, I or L, needs only the last response's bytes. At
   * 300 calls/s two transactions a call wait 32 s in that state, and with their request, response
   * and the TU's listeners they held ~11 KB a call (100 MB); settled, they hold the bytes. Events
   * that can no longer fire lose their listeners (and with them what the listeners captured).
   */
  protected settle(): void {
    if (!this.req) return;
    // lastBytes: transmit() keeps the bytes of every send of lastRes
    this.req = null;
    this.lastRes = undefined;
    for (const e of SETTLED_EVENTS) this.removeAllListeners(e);
  }

  /**
   * Send a response through the transaction. Returns false (and sends nothing) when the state does
   * not allow it, e.g. a second final response or a response after a CANCEL's automatic 487.
   */
  abstract respond(res: SipResponse, opts?: RespondOptions): boolean;

  /** Internal: a retransmission of the request (or the ACK) matched this transaction. */
  abstract receiveRequest(req: SipRequest): void;

  protected transmit(res: SipResponse, retransmission = false): void {
    if (retransmission) this.ctx.onRetransmit(res);
    const data = res.toBuffer();
    if (res === this.lastRes) this.lastBytes = data;
    this.ctx.send(res, this.destination, data).catch((err: Error) => {
      if (this.state === 'Terminated') return;
      this.emit('transport-error', err);
      this.terminate();
    });
  }

  protected terminate(): void {
    if (this.state === 'Terminated') return;
    this.transition('Terminated' as S);
    this.timers.clear();
    this.ctx.onTerminated({ id: this.id, kind: 'server' });
    this.emit('terminated');
  }

  /** Internal: stop everything at stack shutdown. */
  destroy(): void {
    this.terminate();
  }

  protected get reliable(): boolean {
    return isReliable(this.destination.transport);
  }
}

/** Non-INVITE server transaction: Trying -> Proceeding -> Completed -(J)-> Terminated. */
export class NonInviteServerTransaction extends ServerTransaction<NonInviteServerState> {
  readonly isInvite = false;

  constructor(id: string, request: SipRequest, destination: Destination, ctx: TransactionContext) {
    super(id, request, destination, ctx, { name: 'non-INVITE server transaction', table: NON_INVITE_SERVER, initial: 'Trying' });
    // a TU that never answers must not pin the transaction (and the concurrency cap) forever
    this.timers.start('guard', 64 * ctx.timers.t1, () => {
      if (this.state !== 'Trying' && this.state !== 'Proceeding') return;
      this.emit('timeout');
      this.terminate();
    });
  }

  respond(res: SipResponse): boolean {
    if (this.state !== 'Trying' && this.state !== 'Proceeding') return false;
    this.setLastResponse(res);
    this.transmit(res);
    if (res.status < 200) {
      if (this.state === 'Trying') this.transition('Proceeding');
    } else {
      this.transition('Completed');
      this.emit('final', res);
      this.timers.stop('guard');
      // Timer J: keep absorbing request retransmissions for 64*T1 on unreliable transports
      this.timers.start('J', this.reliable ? 0 : 64 * this.ctx.timers.t1, () => this.terminate());
      this.settle();
    }
    return true;
  }

  receiveRequest(): void {
    // Trying: absorb silently; Proceeding/Completed: resend the last response (17.2.2)
    if (this.state === 'Proceeding' || this.state === 'Completed') this.retransmitLast();
  }
}
