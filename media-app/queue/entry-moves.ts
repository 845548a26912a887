/**
 * The states of a caller's queue entry on its node (service.ts `Entry`) and the one table of moves
 * between them; the queuecall row follows them (core/repos/queuecalls.ts, written by the service's
 * `move`), the entry's own state is changed only through `EntryMoves.move` (call/move-table.ts).
 *
 *   waiting ◄──► connecting ──► service      (connecting: an agent rings, or a dequeue whispers)
 *      │             │             │
 *      └─────────────┴─────────────┴──► ended   (hangup, wait timeout, kick, <Leave>, service over)
 *
 * Timers, each owned by the states listed in ENTRY_TIMERS (the move out of them cancels it):
 *   wait           the queue's wait_timeout, from the join, over waiting and connecting (a ring that
 *                  goes unanswered does not restart it; the caller's service cancels it);
 *   service_limit  the queue's service_timeout, from the bridge to the agent: it hangs up the agent's side.
 *                  It lives in service but also only as long as the bridge: `serveBridge` cancels it the
 *                  moment the bridge ends, before the service's end is written (the agent freed, then the
 *                  move to ended), so it never fires on a finished bridge.
 */
import { Moves, type MoveLog, type MoveTable, type TimerOwners } from '../call/move-table';
import type { TimerHost } from '../call/phase-timers';

export type EntryState = 'waiting' | 'connecting' | 'service' | 'ended';

export type EntryTimer = 'wait' | 'service_limit';

/** The moves a queue entry may make. */
export const ENTRY_MOVES: MoveTable<EntryState> = {
  waiting: ['connecting', 'ended'],
  connecting: ['waiting', 'service', 'ended'],
  service: ['ended'],
  ended: [],
};

/** The states each timer of an entry lives in. */
export const ENTRY_TIMERS: TimerOwners<EntryState, EntryTimer> = {
  wait: ['waiting', 'connecting'],
  service_limit: ['service'],
};

export class EntryMoves extends Moves<EntryState, EntryTimer> {
  constructor(queuecallId: string, log: MoveLog, timers?: TimerHost) {
    super(ENTRY_MOVES, ENTRY_TIMERS, 'waiting', { what: 'queuecall', id: queuecallId, log, timers });
  }

  /** The wait timeout (0: none): `fire` unless the caller is served or leaves first. */
  waitTimeout(ms: number, fire: () => void): void {
    if (ms > 0) this.arm('wait', ms, fire);
  }

  /** The service limit (0: none), armed in service: `fire` unless the service ends first. */
  serviceLimit(ms: number, fire: () => void): void {
    if (ms > 0) this.arm('service_limit', ms, fire);
  }

  /** The service over one bridge: the service limit armed until `bridged` settles, cancelled then (before the awaits of the service's end). */
  async serveBridge(bridged: PromiseLike<unknown>, ms: number, fire: () => void): Promise<void> {
    this.serviceLimit(ms, fire);
    try {
      await bridged;
    } finally {
      this.cancel('service_limit');
    }
  }
}
