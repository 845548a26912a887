/**
 * The typed surface of a Bridge (bridge.ts): its states and the one table of moves between them, its
 * parties, the rule for a side that leaves, its events and how it ended.
 *
 *   idle ──► open ◄──► paused ──► consulting ──► open
 *     │       │  ▲       │            │
 *     │       └──┘       │            │           (open → open, paused → paused: a replace)
 *     └───────┴──────────┴────────────┴──► closed
 */
import type { CallEndpoint } from '../media-server/endpoint';

export type BridgeState = 'idle' | 'open' | 'paused' | 'consulting' | 'closed';

/** The moves a bridge may make: `Bridge.move` checks every change of state against this table. */
export const BRIDGE_MOVES: Readonly<Record<BridgeState, readonly BridgeState[]>> = {
  idle: ['open', 'closed'],
  open: ['open', 'paused', 'closed'],
  paused: ['paused', 'open', 'consulting', 'closed'],
  consulting: ['open', 'closed'],
  closed: [],
};

export function canMoveBridge(from: BridgeState, to: BridgeState): boolean {
  return BRIDGE_MOVES[from].includes(to);
}

/**
 * One side of a bridge: a CallSession, or the node-to-node leg of a conference hosted elsewhere
 * (media-app/xnode/leg.ts). `done` resolves once it has ended.
 */
export interface BridgeParty {
  readonly id: string;
  readonly endpoint: CallEndpoint | null;
  readonly isEnded: boolean;
  readonly done: Promise<unknown>;
  /** reasonHeader: the Reason (RFC 3326) of its BYE, e.g. what its dead peer told it (close-reason.ts). */
  hangup(why?: string, reasonHeader?: string): Promise<void>;
}

/**
 * What happens to the side that stays when the other leaves:
 * - hangup_other: it is hung up (a pair whose opener's flow no longer waits on it);
 * - return_to_flow: the owner (the call whose flow opened the bridge: connect's master, the queue's
 *   caller, the call of a cross-node conference leg) is unbridged and its flow goes on; any other
 *   survivor is hung up. Once a transfer replaces the owner, the rule becomes hangup_other.
 * - return_both: both sides' flows wait on it (a <Dial><Queue> dequeue: the queued caller's Enqueue
 *   and the dequeuing call's Dial): the side that stays is unbridged and its flow goes on. A replace
 *   makes it return_to_flow, owned by the side that was not replaced.
 */
export type LeaveRule = { readonly kind: 'hangup_other' } | { readonly kind: 'return_to_flow'; readonly owner: BridgeParty } | { readonly kind: 'return_both' };

/** Why the bridge is paused (the two sides stay its members, their media unlinked). */
export type PauseReason = 'hold' | 'consult' | 'supervise';

/** How a consultation (an attended transfer's) ended. */
export type ConsultOutcome =
  /** the consulting side left: the consulted target took its place and talks to the waiting side */
  | 'complete'
  /** the consulted target left: the consulting side is linked back to the waiting side */
  | 'target_left'
  /** the waiting side left: the bridge closed by its rule; the target is the caller's to drop */
  | 'peer_left'
  /** the bridge was closed by its opener */
  | 'closed';

export type BridgeSlot = 'a' | 'b';

export interface BridgeEnd {
  /** left: a side left (its slot, `left`); closed: its opener closed it; merged: its survivor moved into another bridge (REFER with Replaces). */
  readonly why: 'left' | 'closed' | 'merged';
  readonly slot: BridgeSlot | null;
  readonly left: BridgeParty | null;
  /** What the rule did to the side that stayed. */
  readonly survivor: 'hung_up' | 'returned' | null;
  /** The parties in the two slots when it closed. */
  readonly a: BridgeParty;
  readonly b: BridgeParty;
}

export interface BridgeEvents {
  state: [to: BridgeState, from: BridgeState];
  replaced: [old: BridgeParty, by: BridgeParty];
  closed: [end: BridgeEnd];
  error: [err: Error];
}

/** A bridge operation asked of a bridge or party that cannot take it (programming or race: said plainly). */
export class BridgeError extends Error {}
