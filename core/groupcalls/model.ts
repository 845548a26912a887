/**
 * The Groupcall resource (reference schemas CallManagerGroupcall*): several destinations rung together (ring_all) or one
 * after another (linear); the first to answer runs the groupcall's flow, and with answer_method
 * hangup_others the rest are cancelled. Statuses move progressing → hangingup → hangup only.
 */
export const GROUPCALL_STATUSES = ['progressing', 'hangingup', 'hangup'] as const;
export type GroupcallStatus = (typeof GROUPCALL_STATUSES)[number];
export const RING_METHODS = ['', 'ring_all', 'linear'] as const;
export type RingMethod = (typeof RING_METHODS)[number];
export const ANSWER_METHODS = ['', 'hangup_others'] as const;
export type AnswerMethod = (typeof ANSWER_METHODS)[number];

const NEXT: Record<GroupcallStatus, readonly GroupcallStatus[]> = {
  progressing: ['hangingup', 'hangup'],
  hangingup: ['hangup'],
  hangup: [],
};

export function groupcallPredecessorsOf(to: GroupcallStatus): GroupcallStatus[] {
  return GROUPCALL_STATUSES.filter((s) => NEXT[s].includes(to));
}

/** "" means the platform default: ring_all, hangup_others (what VoIPbin picks for an extension). */
export function effectiveRingMethod(m: RingMethod): Exclude<RingMethod, ''> {
  return m === 'linear' ? 'linear' : 'ring_all';
}
