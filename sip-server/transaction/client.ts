// Client transactions (RFC 3261 17.1, RFC 6026): common surface and the non-INVITE state machine.
import { EventEmitter } from 'node:events';
import type { SipRequest, SipResponse } from '../message';
import { Destination, TimerSet, TransactionContext, isReliable, type AckTarget } from './context';
import { NON_INVITE_CLIENT, StateMachine, type InviteClientState, type NonInviteClientState, type Transitions } from './states';

export type ClientTransactionState = InviteClientState | NonInviteClientState;

/** The events of a client transaction (typed: `tx.on('final', (res) => ...)`). */
export interface ClientTransactionEvents {
  provisional: [res: SipResponse];
  final: [res: SipResponse];
  'additional-2xx': [res: SipResponse];
  timeout: [];
  'transport-error': [err: Error];
  terminated: [];
  /** every move of the state machine, after it happened */
  stateChanged: [to: ClientTransactionState, from: ClientTransactionState];
}

/**
 * Events:
 * - 'provisional' (res): a 1xx response.
 * - 'final' (res): the first final response (exactly once per transaction, unless it timed out).
 * - 'additional-2xx' (res): INVITE only: a further 2xx in Accepted (retransmission or fork). If
 *   ack() was called for that To tag, the same ACK has already been re-sent.
 * - 'timeout' (): Timer B / F fired (or no final 64*T1 after a CANCEL); no 'final' will follow.
 * - 'transport-error' (err): the request could not be sent; no 'final' will follow.
 * - 'terminated' ().
 * - 'stateChanged' (to, from): every state move (through transition(), checked against the table).
 */
export abstract class ClientTransaction<S extends ClientTransactionState = ClientTransactionState> extends EventEmitter<ClientTransactionEvents> {
  abstract readonly isInvite: boolean;
  private readonly machine: StateMachine<S>;
  finalResponse?: SipResponse;
  protected readonly timers = new TimerSet();

  /** Where the request is sent; set once the target is resolved. */
  destination!: Destination;

  constructor(
    /** Transaction key: the branch of our Via plus the CSeq method. */
    readonly id: string,
    /** The request as sent (with our Via on top). */
    readonly request: SipRequest,
    protected readonly ctx: TransactionContext,
    machine: { name: string; table: Transitions<S>; initial: S },
  ) {
    super();
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

  /** Internal: the target resolved; first transmission. */
  begin(dest: Destination): void {
    if (this.state === 'Terminated') return;
    this.destination = dest;
    this.start();
  }

  /** Internal: the target could not be resolved or the request not serialised. */
  fail(err: Error): void {
    this.transportError(err);
  }

  protected abstract start(): void;

  /**
   * INVITE only: cancel the INVITE (RFC 3261 9.1). Before any provisional response the CANCEL is
   * held until one arrives; after a final response it is a no-op. Returns the CANCEL sent or held,
   * undefined when none will be sent (always for other methods).
   */
  cancel(_reason?: string): SipRequest | undefined {
    return undefined; /* only INVITE transactions can be cancelled */
  }

  /**
   * INVITE only: send the ACK for a 2xx (built by the TU: Request-URI = remote target, route set,
   * same CSeq number, method ACK). It gets its own Via branch and is remembered per To tag so it is
   * re-sent automatically when that 2xx is retransmitted.
   */
  ack(_ack: SipRequest, _target?: AckTarget): void {
    throw new Error('ack() applies to INVITE client transactions only');
  }
  /** Internal: a response matched this transaction. */
  abstract receiveResponse(res: SipResponse): void;

  protected get reliable(): boolean {
    return isReliable(this.destination.transport);
  }

  protected transmit(retransmission = false): void {
    if (retransmission) this.ctx.onRetransmit(this.request);
    this.ctx.send(this.request, this.destination).catch((err: Error) => this.transportError(err));
  }

  protected transportError(err: Error): void {
    if (this.state === 'Terminated' || this.finalResponse) return;
    this.emit('transport-error', err);
    this.terminate();
  }

  protected terminate(): void {
    if (this.state === 'Terminated') return;
    this.transition('Terminated' as S);
    this.timers.clear();
    this.ctx.onTerminated({ id: this.id, kind: 'client' });
    this.emit('terminated');
  }

  /** Internal: stop everything at stack shutdown. */
  destroy(): void {
    this.terminate();
  }
}

/** Non-INVITE client transaction: Trying -> Proceeding -> Completed -(K)-> Terminated, Timers E and F. */
export class NonInviteClientTransaction extends ClientTransaction<NonInviteClientState> {
  readonly isInvite = false;

  constructor(id: string, request: SipRequest, ctx: TransactionContext) {
    super(id, request, ctx, { name: 'non-INVITE client transaction', table: NON_INVITE_CLIENT, initial: 'Trying' });
  }

  protected start(): void {
    const t = this.ctx.timers;
    this.transmit();
    if (!this.reliable) this.timerE(t.t1);
    this.timers.start('F', 64 * t.t1, () => {
      if (this.state !== 'Trying' && this.state !== 'Proceeding') return;
      this.emit('timeout');
      this.terminate();
    });
  }

  /** Timer E: T1 doubling up to T2 in Trying; fixed T2 in Proceeding (17.1.2.2). */
  private timerE(interval: number): void {
    this.timers.start('E', interval, () => {
      if (this.state !== 'Trying' && this.state !== 'Proceeding') return;
      this.transmit(true);
      const next = this.state === 'Proceeding' ? this.ctx.timers.t2 : Math.min(2 * interval, this.ctx.timers.t2);
      this.timerE(next);
    });
  }

  receiveResponse(res: SipResponse): void {
    if (this.state === 'Trying' || this.state === 'Proceeding') {
      if (res.status < 200) {
        if (this.state === 'Trying') this.transition('Proceeding');
        this.emit('provisional', res);
        return;
      }
      this.finalResponse = res;
      this.transition('Completed');
      this.timers.stop('E');
      this.timers.stop('F');
      this.emit('final', res);
      this.timers.start('K', this.reliable ? 0 : this.ctx.timers.t4, () => this.terminate());
    }
    // Completed: retransmitted finals are absorbed
  }
}
