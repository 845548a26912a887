/**
 * A guarded move table with timers owned by states, for the timer-heavy objects of media-app (a queue
 * entry: queue/entry-moves.ts, a parked call: pbx/park-moves.ts), as `Bridge.move` checks BRIDGE_MOVES
 * and `TurnJudge.move` VOICE_MOVES. The object's state changes only through `move(to, why)`, checked
 * against its table: a move the table does not allow is refused (logged, false) and changes nothing,
 * so a late event (a ring that ended after the caller left, a retrieve after a timeout) cannot bring an
 * ended object back.
 *
 * Each timer is named and owned by the states its table lists for it (`owners`): it is armed only in
 * one of them and cancelled by the move that leaves them, so a phase's timer cannot outlive it (the
 * rule of call/phase-timers.ts, with a timer that may span several states, such as a queue's wait
 * timeout over waiting and connecting). The timer functions are injected (`TimerHost`): the tests run
 * the objects on virtual time (test/support/virtual-timers.ts).
 */
import { realTimers, type TimerHost } from './phase-timers';

/** For each state, the states it may move to (none: a final state). */
export type MoveTable<S extends string> = Readonly<Record<S, readonly S[]>>;

/** For each timer, the states it lives in. */
export type TimerOwners<S extends string, T extends string> = Readonly<Record<T, readonly S[]>>;

export interface MoveLog {
  warn(obj: object, msg: string): void;
}

export interface MovesOptions<S extends string> {
  /** what moves, for the log ("queuecall", "parked call") */
  what: string;
  id: string;
  log: MoveLog;
  timers?: TimerHost;
  /** told after each move */
  onMove?: (to: S, from: S, why: string) => void;
}

export class Moves<S extends string, T extends string> {
  private st: S;
  private readonly armed = new Map<T, unknown>();
  private readonly host: TimerHost;

  constructor(
    private readonly table: MoveTable<S>,
    private readonly owners: TimerOwners<S, T>,
    initial: S,
    private readonly o: MovesOptions<S>,
  ) {
    this.st = initial;
    this.host = o.timers ?? realTimers;
  }

  get state(): S {
    return this.st;
  }

  /** A final state: no move leaves it. */
  get ended(): boolean {
    return this.table[this.st].length === 0;
  }

  /** The timers armed now (for tests and checks). */
  get timers(): T[] {
    return [...this.armed.keys()];
  }

  /** The state now (a call, not a property: TypeScript keeps no narrowing of it across an await). */
  is(s: S): boolean {
    return this.st === s;
  }

  can(to: S): boolean {
    return this.table[this.st].includes(to);
  }

  /** The one change of state: refused (logged, false) when the table does not allow it; the timers not owned by `to` are cancelled. */
  move(to: S, why: string): boolean {
    const from = this.st;
    if (!this.can(to)) {
      this.o.log.warn({ [this.o.what]: this.o.id, from, to, why }, `${this.o.what} move ${from} → ${to} refused`);
      return false;
    }
    this.st = to;
    for (const [t, h] of [...this.armed]) {
      if (this.owners[t].includes(to)) continue;
      this.armed.delete(t);
      this.host.clear(h);
    }
    this.moved(to, from, why);
    return true;
  }

  /** After each move (a subclass's hook; by default `onMove`). */
  protected moved(to: S, from: S, why: string): void {
    this.o.onMove?.(to, from, why);
  }

  /** Arms timer `t` (replacing its earlier arming): only in a state that owns it, else refused (logged, false). */
  arm(t: T, ms: number, fn: () => void): boolean {
    if (!this.owners[t].includes(this.st)) {
      this.o.log.warn({ [this.o.what]: this.o.id, state: this.st, timer: t }, `${this.o.what} timer ${t} not armed in ${this.st}`);
      return false;
    }
    this.cancel(t);
    const h = this.host.set(ms, () => {
      if (this.armed.get(t) !== h) return;
      this.armed.delete(t);
      fn();
    });
    this.armed.set(t, h);
    return true;
  }

  cancel(t: T): void {
    const h = this.armed.get(t);
    if (h === undefined) return;
    this.armed.delete(t);
    this.host.clear(h);
  }

  /** Cancels every timer (the owner stops), the state kept. */
  cancelAll(): void {
    for (const t of [...this.armed.keys()]) this.cancel(t);
  }
}
