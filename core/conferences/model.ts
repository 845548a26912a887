/**
 * Conference and conferencecall vocabulary (reference schemas ConferenceManager*, spec: States and transitions).
 * States only move forward; each transition lists the states it may come from.
 */
export const CONFERENCE_TYPES = ['conference', 'connect'] as const;
/** `queue` conferences are internal (the queue subsystem makes them); the API creates only the two above. */
export type ConferenceType = (typeof CONFERENCE_TYPES)[number] | 'queue';

export const CONFERENCE_STATUSES = ['starting', 'progressing', 'terminating', 'terminated'] as const;
export type ConferenceStatus = (typeof CONFERENCE_STATUSES)[number];

export const CONFERENCECALL_STATUSES = ['joining', 'joined', 'leaving', 'leaved'] as const;
export type ConferencecallStatus = (typeof CONFERENCECALL_STATUSES)[number];

const CONFERENCE_FROM: Record<ConferenceStatus, readonly ConferenceStatus[]> = {
  starting: [],
  progressing: ['starting'],
  terminating: ['starting', 'progressing'],
  terminated: ['starting', 'progressing', 'terminating'],
};

const CONFERENCECALL_FROM: Record<ConferencecallStatus, readonly ConferencecallStatus[]> = {
  joining: [],
  joined: ['joining'],
  leaving: ['joining', 'joined'],
  leaved: ['joining', 'joined', 'leaving'],
};

export const conferencePredecessors = (to: ConferenceStatus): readonly ConferenceStatus[] => CONFERENCE_FROM[to];
export const conferencecallPredecessors = (to: ConferencecallStatus): readonly ConferencecallStatus[] => CONFERENCECALL_FROM[to];

/** A participant still in (or on its way into) the room: DELETE /conferencecalls may kick it. */
export const isPresent = (s: ConferencecallStatus): boolean => s === 'joining' || s === 'joined';

/** voipbin's default conference timeout (seconds), used when a client asks for 1–59 s. */
export const DEFAULT_TIMEOUT_SEC = 86_400;

/** 0 = none; 1–59 is silently replaced by a day (as VoIPbin does); 60 and more as given. */
export function normalizeTimeout(sec: number): number {
  if (sec <= 0) return 0;
  return sec < 60 ? DEFAULT_TIMEOUT_SEC : sec;
}

/** When a conference times out (null: never). */
export function timeoutAt(row: { timeout: number; tm_create: Date }): Date | null {
  return row.timeout > 0 ? new Date(row.tm_create.getTime() + row.timeout * 1000) : null;
}
