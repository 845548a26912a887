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

/**
 * Where a TU sends the ACK for a 2xx when not by the ACK's Request-URI/Route: the dialog's transport
 * and, while it is open, its connection (RFC 3261 18, RFC 5923). `host` may be a name.
 */
export interface AckTarget {
  transport: TransportName;
  host: string;
  port: number;
  /** tcp/tls/ws/wss: the connection to send on while it is open */
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
  /** `data`: the message's bytes, when the transaction has serialized it already */
  send(msg: SipMessage, dest: Destination, data?: Buffer): Promise<void>;
  /** Called for every retransmission (metrics). */
  onRetransmit(msg: SipMessage): void;
  /** Called once when a transaction reaches Terminated (the layer forgets it). */
  onTerminated(tx: { id: string; kind: 'client' | 'server' }): void;
  /** An illegal state move outside tests (in tests it throws): report it; the move is ignored. */
  onIllegalTransition?(e: IllegalTransition): void;
}

export function isReliable(t: TransportName): boolean {
  return t !== 'udp';
}

/**
 * Timers that need no precision: the clean-up and give-up timers of 5 s and more (J, L, K, I, D, B, F,
 * H at their RFC 3261 defaults). They are kept in buckets of COARSE_GRAIN_MS and run by one shared
 * interval, late by at most one grain, so at 300 calls/s the two that fire per call (J after BYE, L
 * after the INVITE's 2xx) cost no wake-up of the process of their own and no Node timer each.
 * The interval runs only while a timer is pending.
 */
export const COARSE_FROM_MS = 5000;
export const COARSE_GRAIN_MS = 200;

class CoarseEntry {
  constructor(public fn: (() => void) | null) {}
}

export class CoarseTimers {
  private readonly buckets = new Map<number, CoarseEntry[]>();
  private pending = 0;
  private interval: NodeJS.Timeout | null = null;
  private next = 0;

  constructor(private readonly grainMs = COARSE_GRAIN_MS) {}

  /** timers waiting (not run, not cancelled) */
  get size(): number {
    return this.pending;
  }

  /** true while the shared interval runs */
  get active(): boolean {
    return this.interval !== null;
  }

  add(ms: number, fn: () => void): CoarseEntry {
    const e = new CoarseEntry(fn);
    const slot = Math.ceil((performance.now() + ms) / this.grainMs);
    const b = this.buckets.get(slot);
    if (b) b.push(e);
    else this.buckets.set(slot, [e]);
    this.pending++;
    if (!this.interval) this.startInterval();
    return e;
  }

  cancel(e: CoarseEntry): void {
    if (!e.fn) return;
    e.fn = null;
    if (--this.pending === 0) this.stopInterval();
  }

  private startInterval(): void {
    this.next = Math.floor(performance.now() / this.grainMs);
    this.interval = setInterval(() => this.run(), this.grainMs);
    this.interval.unref();
  }

  private stopInterval(): void {
    if (this.interval) clearInterval(this.interval);
    this.interval = null;
    this.buckets.clear();
  }

  private run(): void {
    const now = Math.floor(performance.now() / this.grainMs);
    for (; this.next <= now; this.next++) {
      const b = this.buckets.get(this.next);
      if (!b) continue;
      this.buckets.delete(this.next);
      for (const e of b) {
        const fn = e.fn;
        if (!fn) continue;
        e.fn = null;
        this.pending--;
        try {
          fn();
        } catch (err) {
          process.emitWarning(`transaction timer failed: ${(err as Error).stack ?? String(err)}`);
        }
      }
    }
    if (this.pending === 0) this.stopInterval();
  }
}

/** the process's shared coarse timers (what TimerSet uses) */
export const coarse = new CoarseTimers();

/** A one-shot timer: on the shared coarse timers from COARSE_FROM_MS, a Node timer (unref'd) below. */
export type OneShot = NodeJS.Timeout | CoarseEntry;

export function oneShot(ms: number, fn: () => void): OneShot {
  if (ms >= COARSE_FROM_MS) return coarse.add(ms, fn);
  const t = setTimeout(fn, ms);
  t.unref?.();
  return t;
}

export function cancelOneShot(t: OneShot): void {
  if (t instanceof CoarseEntry) coarse.cancel(t);
  else clearTimeout(t);
}

/** Named one-shot timers that are all cleared when the transaction terminates. */
export class TimerSet {
  private timers = new Map<string, OneShot>();

  start(name: string, ms: number, fn: () => void): void {
    this.stop(name);
    this.timers.set(
      name,
      oneShot(ms, () => {
        this.timers.delete(name);
        fn();
      }),
    );
  }

  stop(name: string): void {
    const t = this.timers.get(name);
    if (t) {
      cancelOneShot(t);
      this.timers.delete(name);
    }
  }

  has(name: string): boolean {
    return this.timers.has(name);
  }

  clear(): void {
    for (const t of this.timers.values()) cancelOneShot(t);
    this.timers.clear();
  }
}
