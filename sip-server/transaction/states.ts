// The RFC 3261 §17 transaction state machines (with the RFC 6026 Accepted state) as tables of
// allowed moves, and the one transition check every machine uses (the style of SIP.js core).
//
//   INVITE client (17.1.1):     Calling -> Proceeding -> Completed | Accepted -> Terminated
//   non-INVITE client (17.1.2): Trying -> Proceeding -> Completed -> Terminated
//   INVITE server (17.2.1):     Proceeding -> Completed -> Confirmed -> Terminated; Proceeding -> Accepted -> Terminated
//   non-INVITE server (17.2.2): Trying -> Proceeding -> Completed -> Terminated
// Every state may end in Terminated (timeout, transport error, stack shutdown); nothing leaves it.
//
// An illegal move is a programming error: it throws under NODE_ENV=test (so the suites catch it) and
// is reported through `onIllegal` and ignored otherwise (production keeps serving the other calls).

export type Transitions<S extends string> = { readonly [K in S]: readonly S[] };
/** Any machine's table, its state names erased (what a transaction keeps). */
export type MoveTable = { readonly [state: string]: readonly string[] };

export type InviteClientState = 'Calling' | 'Proceeding' | 'Completed' | 'Accepted' | 'Terminated';
export type NonInviteClientState = 'Trying' | 'Proceeding' | 'Completed' | 'Terminated';
export type InviteServerState = 'Proceeding' | 'Completed' | 'Confirmed' | 'Accepted' | 'Terminated';
export type NonInviteServerState = 'Trying' | 'Proceeding' | 'Completed' | 'Terminated';

export const INVITE_CLIENT: Transitions<InviteClientState> = {
  Calling: ['Proceeding', 'Completed', 'Accepted', 'Terminated'],
  Proceeding: ['Completed', 'Accepted', 'Terminated'],
  Completed: ['Terminated'],
  Accepted: ['Terminated'],
  Terminated: [],
};

export const NON_INVITE_CLIENT: Transitions<NonInviteClientState> = {
  Trying: ['Proceeding', 'Completed', 'Terminated'],
  Proceeding: ['Completed', 'Terminated'],
  Completed: ['Terminated'],
  Terminated: [],
};

export const INVITE_SERVER: Transitions<InviteServerState> = {
  Proceeding: ['Completed', 'Accepted', 'Terminated'],
  Completed: ['Confirmed', 'Terminated'],
  Confirmed: ['Terminated'],
  Accepted: ['Terminated'],
  Terminated: [],
};

export const NON_INVITE_SERVER: Transitions<NonInviteServerState> = {
  Trying: ['Proceeding', 'Completed', 'Terminated'],
  Proceeding: ['Completed', 'Terminated'],
  Completed: ['Terminated'],
  Terminated: [],
};

export class IllegalTransition extends Error {
  constructor(
    readonly machine: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`${machine}: illegal state transition ${from} -> ${to}`);
    this.name = 'IllegalTransition';
  }
}

/** Throw on illegal moves (tests) or report and ignore them (production). */
export const strictTransitions = (): boolean => process.env.NODE_ENV === 'test';

/**
 * The one transition check: true when `from -> to` is in `table` (the caller then moves). An
 * illegal move throws IllegalTransition when strict, else is passed to `onIllegal` and refused.
 */
export function allowMove(machine: string, table: MoveTable, from: string, to: string, onIllegal?: (e: IllegalTransition) => void, strict = strictTransitions()): boolean {
  if (table[from]?.includes(to)) return true;
  const e = new IllegalTransition(machine, from, to);
  if (strict) throw e;
  onIllegal?.(e);
  return false;
}

/** A machine's current state and its one transition function (held by a transaction or a dialog). */
export class StateMachine<S extends string> {
  private current: S;
  private readonly table: MoveTable;

  constructor(
    private readonly name: string,
    table: Transitions<S>,
    initial: S,
    /** where an illegal move is reported outside tests */
    private readonly onIllegal: () => ((e: IllegalTransition) => void) | undefined,
    /** told after every move (a method, so a machine of fewer states is still a machine of the union) */
    private readonly listener?: { moved(to: S, from: S): void },
  ) {
    this.current = initial;
    this.table = table;
  }

  get state(): S {
    return this.current;
  }

  /** Moves to `to` when the table allows it; an illegal move throws (tests) or is reported and refused. */
  to(to: S): boolean {
    const from = this.current;
    if (!allowMove(this.name, this.table, from, to, this.onIllegal())) return false;
    this.current = to;
    this.listener?.moved(to, from);
    return true;
  }
}
