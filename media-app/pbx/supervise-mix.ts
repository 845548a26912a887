/**
 * The supervisor's place in the supervision mix (pbx/supervise.ts), as pure steps: who hears the
 * supervisor is decided by two settings of the engine's conference, its input mute and its whisper
 * target, changed one at a time. The steps of each mode are ordered so that no state between two steps
 * lets anyone hear the supervisor who hears it neither before nor after: the customer never hears a
 * whisper turning into listen, nor a joining supervisor before its mode is set (it joins muted).
 */
import type { SuperviseMode } from '../../core/pbx/supervisions';

/** One change of the mix: the supervisor's input muted or not, its whisper to the target or to nobody. */
export type MixStep = { op: 'mute' } | { op: 'unmute' } | { op: 'whisper'; to: 'target' | null };

/** The supervisor joins with its input muted: nobody hears it until its mode's steps are applied. */
export const JOIN_MUTED = 'in' as const;

const STEPS: Readonly<Record<SuperviseMode, readonly MixStep[]>> = {
  // silenced first, then its whisper dropped: while it still whispered, only the target heard it
  listen: [{ op: 'mute' }, { op: 'whisper', to: null }],
  // the whisper narrowed to the target first, then heard
  whisper: [{ op: 'whisper', to: 'target' }, { op: 'unmute' }],
  // everyone hears it: the order widens only
  barge: [{ op: 'whisper', to: null }, { op: 'unmute' }],
};

export function modeSteps(mode: SuperviseMode): readonly MixStep[] {
  return STEPS[mode];
}

/** The mix's two settings for the supervisor. */
export interface MixState {
  muted: boolean;
  whisperTo: 'target' | null;
}

/** Who hears the supervisor in `s`: the target (agent) and the peer (customer). */
export function hearers(s: MixState): { target: boolean; peer: boolean } {
  if (s.muted) return { target: false, peer: false };
  return { target: true, peer: s.whisperTo === null };
}

export function applyStep(s: MixState, step: MixStep): MixState {
  if (step.op === 'whisper') return { ...s, whisperTo: step.to };
  return { ...s, muted: step.op === 'mute' };
}
