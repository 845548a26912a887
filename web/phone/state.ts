/**
 * The browser phone's two state machines, each with one transition function: the registration of
 * the user agent and the current call. Events the machine does not expect in a state are ignored
 * (the state stays), so a late JsSIP event can never move a finished call back to life.
 */

export type RegState = 'signed-out' | 'connecting' | 'registered' | 'unregistered' | 'failed';

export type RegEvent = { type: 'start' } | { type: 'registered' } | { type: 'unregistered' } | { type: 'failed'; cause: string } | { type: 'stop' };

export function regTransition(s: RegState, e: RegEvent): RegState {
  switch (e.type) {
    case 'start':
      return s === 'signed-out' || s === 'failed' || s === 'unregistered' ? 'connecting' : s;
    case 'registered':
      return s === 'signed-out' ? s : 'registered';
    case 'unregistered':
      return s === 'signed-out' ? s : 'unregistered';
    case 'failed':
      return s === 'signed-out' ? s : 'failed';
    case 'stop':
      return 'signed-out';
  }
}

export type CallPhase = 'idle' | 'dialing' | 'incoming' | 'ringing' | 'connected' | 'held' | 'ended';

export interface CallState {
  phase: CallPhase;
  direction: 'in' | 'out' | null;
  /** The other party as shown (display name or URI user). */
  peer: string;
  muted: boolean;
  /** Why the call ended (JsSIP cause, e.g. "Canceled", "Busy", "RTP Timeout"), once ended. */
  reason: string;
  /** Who ended it: "local", "remote" or "system". */
  endedBy: string;
  /** Epoch ms when the call was answered (0 until then). */
  answeredAt: number;
}

export const IDLE: CallState = { phase: 'idle', direction: null, peer: '', muted: false, reason: '', endedBy: '', answeredAt: 0 };

export type CallEvent =
  | { type: 'dial'; peer: string }
  | { type: 'incoming'; peer: string }
  | { type: 'progress' }
  | { type: 'answered'; at: number }
  | { type: 'hold' }
  | { type: 'unhold' }
  | { type: 'mute'; muted: boolean }
  | { type: 'ended'; reason: string; by: string }
  | { type: 'clear' };

const live = (p: CallPhase) => p === 'dialing' || p === 'incoming' || p === 'ringing' || p === 'connected' || p === 'held';

export function callTransition(s: CallState, e: CallEvent): CallState {
  switch (e.type) {
    case 'dial':
      return live(s.phase) ? s : { ...IDLE, phase: 'dialing', direction: 'out', peer: e.peer };
    case 'incoming':
      return live(s.phase) ? s : { ...IDLE, phase: 'incoming', direction: 'in', peer: e.peer };
    case 'progress':
      return s.phase === 'dialing' ? { ...s, phase: 'ringing' } : s;
    case 'answered':
      return s.phase === 'dialing' || s.phase === 'ringing' || s.phase === 'incoming' ? { ...s, phase: 'connected', answeredAt: e.at } : s;
    case 'hold':
      return s.phase === 'connected' ? { ...s, phase: 'held' } : s;
    case 'unhold':
      return s.phase === 'held' ? { ...s, phase: 'connected' } : s;
    case 'mute':
      return s.phase === 'connected' || s.phase === 'held' ? { ...s, muted: e.muted } : s;
    case 'ended':
      return live(s.phase) ? { ...s, phase: 'ended', reason: e.reason, endedBy: e.by } : s;
    case 'clear':
      return live(s.phase) ? s : IDLE;
  }
}

export function isLive(s: CallState): boolean {
  return live(s.phase);
}
