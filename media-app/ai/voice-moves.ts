/**
 * The turn-taking states of a voice session (media-app/ai/voice.ts) and the one table of moves
 * between them: `TurnJudge.move` (turn-judge.ts) checks every change of state against VOICE_MOVES, as
 * `Bridge.move` checks BRIDGE_MOVES (media-app/call/bridge-types.ts).
 *
 * With no caller turn open, the state is what the agent does (listening, thinking, speaking). A caller
 * turn is open from its first speech (or words) until it is judged over: caller_turn while the caller
 * is heard, judging while the caller is silent and the end-of-turn wait runs. A turn that began while
 * the agent spoke is an overlap: its words decide (a backchannel closes it, other words cut the reply
 * and make it a plain turn); overlap while the caller is heard, overlap_judging once silent.
 *
 *   listening ◄──► thinking ◄──► speaking          (the agent's reply, no caller turn open)
 *       │              │             │
 *       ▼              ▼             ▼
 *   caller_turn ◄──► judging    overlap ◄──► overlap_judging
 *       ▲   the words decide: ───────┘             │
 *       └────────────── (caller_turn / judging) ◄──┘
 *   judging, overlap_judging ──► listening | thinking | speaking   (the turn is over, or a backchannel)
 *   any ──► ended
 *
 * The agent's reply may go on under an open turn (a greeting that may not be cut, a reply started
 * while the caller spoke again): the state then stays the turn's; TurnJudge keeps what the agent does.
 * Whether the agent is silenced at the caller meanwhile (ducked) is the call's media state, with its
 * own timers (duck.ts), not a state of this table: it neither opens nor ends a turn.
 */
import { realTimers, type TimerHost } from '../call/phase-timers';

export type VoiceState = 'listening' | 'thinking' | 'speaking' | 'caller_turn' | 'judging' | 'overlap' | 'overlap_judging' | 'ended';

/** What the agent's reply does: nothing, waiting for the LLM's first sentence, or playing. */
export type AgentActivity = 'idle' | 'thinking' | 'speaking';

/** The moves a voice session may make: `TurnJudge.move` checks every change of state against this table. */
export const VOICE_MOVES: Readonly<Record<VoiceState, readonly VoiceState[]>> = {
  listening: ['thinking', 'caller_turn', 'judging', 'ended'],
  thinking: ['thinking', 'speaking', 'listening', 'caller_turn', 'judging', 'ended'],
  speaking: ['thinking', 'listening', 'overlap', 'overlap_judging', 'ended'],
  caller_turn: ['caller_turn', 'judging', 'ended'],
  judging: ['judging', 'caller_turn', 'listening', 'thinking', 'speaking', 'ended'],
  overlap: ['overlap', 'overlap_judging', 'caller_turn', 'ended'],
  overlap_judging: ['overlap', 'judging', 'listening', 'thinking', 'speaking', 'ended'],
  ended: [],
};

/** The states in which a caller turn is open. */
export const TURN_OPEN: ReadonlySet<VoiceState> = new Set(['caller_turn', 'judging', 'overlap', 'overlap_judging']);

export function canMoveVoice(from: VoiceState, to: VoiceState): boolean {
  return VOICE_MOVES[from].includes(to);
}

/** A move the table does not allow: a fault of the session's logic, never of its input. */
export class VoiceMoveError extends Error {
  constructor(
    readonly from: VoiceState,
    readonly to: VoiceState,
    readonly why: string,
  ) {
    super(`voice move ${from} → ${to} refused (${why})`);
    this.name = 'VoiceMoveError';
  }
}

/** The session's time: its timers (owned by the state that armed them) and now(); a virtual clock's in tests. */
export interface VoiceClock extends TimerHost {
  now(): number;
}

export const realVoiceClock: VoiceClock = { ...realTimers, now: () => Date.now() };
