/**
 * SIP dialogs as drachtio-server tracks them (RFC 3261 12). The dialog id handed to applications is
 * `<Call-ID>;from-tag=<tag of the party that sent the INVITE>`, the form drachtio-srf's
 * findDialogByCallIDAndFromTag() rebuilds.
 */
import type { Context } from '../../core/tracing';
import { StateMachine, type IllegalTransition, type Transitions } from '../transaction/states';
import type { AppConnection } from './app-connection';
import type { Endpoint, InboundTransaction, OutboundTransaction, SipPort } from './sip-port';

/** How a dialog holds its connection open (SipPort.pin/unpin). */
export type FlowPins = Pick<SipPort, 'pin' | 'unpin'>;

export type DialogRole = 'uas' | 'uac';

/**
 * RFC 3261 12: a dialog is created early (a 1xx with a To tag) or confirmed (a 2xx); an early one
 * is confirmed by the 2xx or ends (non-2xx, CANCEL); a confirmed one ends with BYE (or its app).
 */
export type DialogState = 'Early' | 'Confirmed' | 'Terminated';
export const DIALOG: Transitions<DialogState> = {
  Early: ['Confirmed', 'Terminated'],
  Confirmed: ['Terminated'],
  Terminated: [],
};

export function dialogIdOf(callId: string, callerTag: string): string {
  return `${callId};from-tag=${callerTag}`;
}

export class Dialog {
  /** CSeq of our last request; incremented for every new in-dialog request except ACK/CANCEL */
  localSeq: number;
  /** highest CSeq seen from the peer (requests below it are rejected, RFC 3261 12.2.2) */
  remoteSeq: number;
  /** UAC side: the INVITE transaction (and its CSeq) whose 2xx the application still has to ACK */
  ackable?: { tx: OutboundTransaction; seq: number };
  /** UAS side: the INVITE server transaction whose 2xx awaits the peer's ACK */
  awaitingAck?: InboundTransaction;
  private readonly machine: StateMachine<DialogState>;
  /** where an illegal move is reported outside tests (set by the table the dialog is added to) */
  onIllegalTransition?: (e: IllegalTransition) => void;
  /** the method that formed it: a terminated subscription ends a SUBSCRIBE dialog only, never the INVITE dialog a REFER's implicit subscription lives in (RFC 3515) */
  formedBy = 'INVITE';
  /** the trace context of the span of the transaction that formed it (trace.ts): its requests' spans join it; none when untraced */
  trace?: Context;
  /** the connection its flow is pinned on while it is in a table (set by the table) */
  pinned?: { connectionId: string; key: string };
  /** told when the flow changes (set by the table, which moves the pin) */
  onFlow?: (d: Dialog) => void;
  private flow: Endpoint;

  constructor(
    readonly role: DialogRole,
    readonly callId: string,
    readonly localTag: string,
    public remoteTag: string,
    /** our From (uac) / To (uas) header value, tag included */
    public localParty: string,
    /** the peer's header value, tag included */
    public remoteParty: string,
    /** peer Contact URI: the Request-URI of in-dialog requests */
    public remoteTarget: string,
    /** Route set, in the order to put in Route headers */
    public routeSet: string[],
    /** our Contact header value */
    public localContact: string,
    /** transport and address of the peer for requests without a route set (the flow used so far) */
    remote: Endpoint,
    localSeq: number,
    remoteSeq: number,
    /** the application that owns this dialog */
    public owner: AppConnection | undefined,
    /** drachtio transaction id of the dialog-forming INVITE */
    readonly inviteTxnId: string,
    initial: 'Early' | 'Confirmed' = 'Confirmed',
  ) {
    this.flow = remote;
    this.localSeq = localSeq;
    this.remoteSeq = remoteSeq;
    this.machine = new StateMachine<DialogState>('dialog', DIALOG, initial, () => this.onIllegalTransition);
  }

  /** transport and address of the peer for requests without a route set (the flow used so far) */
  get remote(): Endpoint {
    return this.flow;
  }
  set remote(e: Endpoint) {
    this.flow = e;
    this.onFlow?.(this);
  }

  get state(): DialogState {
    return this.machine.state;
  }
  /** created by a 1xx with a To tag, not yet confirmed by the 2xx (requests such as PRACK and UPDATE may flow before) */
  get early(): boolean {
    return this.state === 'Early';
  }
  get ended(): boolean {
    return this.state === 'Terminated';
  }

  /** The one way the state changes: a move DIALOG allows (illegal: throws in tests, reported and ignored otherwise). */
  transition(to: DialogState): boolean {
    return this.machine.to(to);
  }

  get id(): string {
    return dialogIdOf(this.callId, this.role === 'uac' ? this.localTag : this.remoteTag);
  }
}

/**
 * The live dialogs. Each one in the table pins its TCP/TLS connection (`Dialog.remote.connectionId`)
 * open against the idle sweep (RFC 5923: the connection a dialog uses is kept while it does; a peer
 * behind NAT cannot be reached on a new one); the pin follows the flow and goes with the dialog.
 */
export class DialogTable {
  private readonly byId = new Map<string, Dialog>();
  private pinSeq = 0;

  constructor(
    private readonly onIllegalTransition?: (e: IllegalTransition) => void,
    private readonly pins?: FlowPins,
  ) {}

  /** `<Call-ID>|<local tag>`: how an incoming in-dialog request finds its dialog */
  private readonly byLocal = new Map<string, Dialog>();
  private readonly byCall = new Map<string, Dialog>();

  add(d: Dialog): void {
    d.onIllegalTransition = this.onIllegalTransition;
    d.onFlow = (x) => this.pin(x);
    this.pin(d);
    this.byId.set(d.id, d);
    this.byLocal.set(`${d.callId}|${d.localTag}`, d);
    this.byCall.set(d.callId, d);
  }

  get(id: string): Dialog | undefined {
    return this.byId.get(id);
  }

  /** match an incoming request: its To tag is our local tag */
  match(callId: string, localTag: string | undefined): Dialog | undefined {
    if (!localTag) return undefined;
    return this.byLocal.get(`${callId}|${localTag}`);
  }

  byCallId(callId: string): Dialog | undefined {
    return this.byCall.get(callId);
  }

  remove(d: Dialog): void {
    if (!d.ended) d.transition('Terminated');
    d.onFlow = undefined;
    this.unpin(d);
    if (this.byId.get(d.id) === d) this.byId.delete(d.id);
    const key = `${d.callId}|${d.localTag}`;
    if (this.byLocal.get(key) === d) this.byLocal.delete(key);
    if (this.byCall.get(d.callId) === d) this.byCall.delete(d.callId);
  }

  /** Pin the dialog's current connection (releasing the one it held). */
  private pin(d: Dialog): void {
    const id = d.remote.connectionId;
    if (d.pinned?.connectionId === id) return;
    this.unpin(d);
    if (!id || !this.pins) return;
    d.pinned = { connectionId: id, key: `dialog-${++this.pinSeq}` };
    this.pins.pin(id, d.pinned.key);
  }

  private unpin(d: Dialog): void {
    if (!d.pinned) return;
    this.pins?.unpin(d.pinned.connectionId, d.pinned.key);
    d.pinned = undefined;
  }

  ownedBy(conn: AppConnection): Dialog[] {
    return [...this.byId.values()].filter((d) => d.owner === conn);
  }

  get size(): number {
    return this.byId.size;
  }

  all(): Dialog[] {
    return [...this.byId.values()];
  }
}
