// What a transaction needs from the stack: a way to send, timer values, and hooks for metrics/logs.
import type { SipMessage, TransportName } from '../message';
import type { IllegalTransition } from './states';

/** A resolved next hop: numeric address, port and transport (plus the connection to reuse, if any). */
export interface Destination {
  transport: TransportName;
  address: string;
  port: number;
  /** tcp/tls: send on this existing connection when it is still open. */
  connectionId?: string;
}

export interface TimerValues {
  /** RTT estimate, default 500 ms. */
  t1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses, default 4 s. */
  t2: number;
  /** Maximum duration a message remains in the network, default 5 s. */
  t4: number;
}

export interface TransactionContext {
  timers: TimerValues;
  send(msg: SipMessage, dest: Destination): Promise<void>;
  /** Called for every retransmission (metrics). */
  onRetransmit(msg: SipMessage): void;
  /** Called once when a transaction reaches Terminated (the layer forgets it). */
  onTerminated(tx: { id: string; kind: 'client' | 'server' }): void;
  /** An illegal state move outside tests (in tests it throws): report it; the move is ignored. */
  onIllegalTransition?(e: IllegalTransition): void;
}

export function isReliable(t: TransportName): boolean { return t !== 'udp'; }

/** Named one-shot timers that are all cleared when the transaction terminates. */
export class TimerSet {
  private timers = new Map<string, NodeJS.Timeout>();

  start(name: string, ms: number, fn: () => void): void {
    this.stop(name);
    const t = setTimeout(() => { this.timers.delete(name); fn(); }, ms);
    t.unref?.();
    this.timers.set(name, t);
  }

  stop(name: string): void {
    const t = this.timers.get(name);
    if (t) { clearTimeout(t); this.timers.delete(name); }
  }

  has(name: string): boolean { return this.timers.has(name); }

  clear(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
