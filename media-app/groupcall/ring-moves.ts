/**
 * The states of a groupcall ringing on this node (runner.ts `Ringing`) and the one table of moves
 * between them (call/move-table.ts): the row's status (progressing → hangingup → hangup,
 * core/groupcalls/model.ts) follows them, the first answer is recorded once in the row (claimAnswer).
 *
 *   ringing ──► answered ──► stopping ──► ended
 *      │                        ▲           ▲
 *      └────────────────────────┴───────────┘   (hangup asked; no call live and none left to dial)
 *
 * A groupcall has no timer of its own: each destination's ring timeout is its call's dial timeout,
 * owned by that call's setup phase (call/phase-timers.ts), so an answer ends it with the ringing.
 */
import { Moves, type MoveLog, type MoveTable } from '../call/move-table';

export type RingState = 'ringing' | 'answered' | 'stopping' | 'ended';

/** The moves a ringing groupcall may make. */
export const GROUPCALL_RING_MOVES: MoveTable<RingState> = {
  ringing: ['answered', 'stopping', 'ended'],
  answered: ['stopping', 'ended'],
  stopping: ['ended'],
  ended: [],
};

export function ringMoves(groupcallId: string, log: MoveLog): Moves<RingState, never> {
  return new Moves<RingState, never>(GROUPCALL_RING_MOVES, {}, 'ringing', { what: 'groupcall', id: groupcallId, log });
}
