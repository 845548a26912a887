/**
 * The Call resource's enums and state rules (spec "Call"; reference schemas CallManagerCall*). Pure functions: the
 * repository and media-app both use them, so a status only ever moves along an allowed edge.
 */
export const CALL_STATUSES = ['dialing', 'ringing', 'progressing', 'terminating', 'canceling', 'hangup'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export type CallDirection = 'incoming' | 'outgoing';
export type CallType = '' | 'flow' | 'conference' | 'sip-service';
export type HangupBy = '' | 'remote' | 'local';
/** session_expired: the peer stopped refreshing its session timer (RFC 4028); media_timeout: no RTP or RTCP from it (MEDIA_INACTIVITY_TIMEOUT_MS). */
export const HANGUP_REASONS = ['', 'normal', 'failed', 'busy', 'cancel', 'timeout', 'noanswer', 'dialout', 'amd', 'session_expired', 'media_timeout'] as const;
export type HangupReason = (typeof HANGUP_REASONS)[number];
export type MuteDirection = '' | 'both' | 'in' | 'out';

/** The allowed moves between call statuses: every owner of a call (media-app's CallSession) and the repository check them. */
export const CALL_MOVES: Record<CallStatus, readonly CallStatus[]> = {
  dialing: ['ringing', 'progressing', 'terminating', 'canceling', 'hangup'],
  ringing: ['progressing', 'terminating', 'canceling', 'hangup'],
  progressing: ['terminating', 'hangup'],
  terminating: ['hangup'],
  canceling: ['hangup'],
  hangup: [],
};

/** Whether `from → to` is an allowed edge (same → same is not). */
export function canTransition(from: CallStatus, to: CallStatus): boolean {
  return CALL_MOVES[from].includes(to);
}

/** Statuses from which `to` can be reached in one step (used as a guarded UPDATE's WHERE clause). */
export function predecessorsOf(to: CallStatus): CallStatus[] {
  return CALL_STATUSES.filter((s) => CALL_MOVES[s].includes(to));
}

/** Who ended the call, from the status it had before hangup: we were tearing it down → local. */
export function hangupByFor(lastStatus: CallStatus): HangupBy {
  return lastStatus === 'terminating' || lastStatus === 'canceling' ? 'local' : 'remote';
}

/**
 * Why the call ended. `cause` is the signalling cause as media-app saw it: a SIP final status for a
 * failed dial-out, or one of the named causes below.
 */
export type HangupCause =
  | 'normal_clearing'
  | 'no_answer'
  | 'call_rejected'
  | 'user_busy'
  | 'answered_elsewhere'
  | 'duration_timeout'
  | 'amd'
  | 'unknown'
  | 'failure'
  /** the peer's session timer ran out (RFC 4028: no refresh in time) */
  | 'session_expired'
  /** the peer sent no RTP or RTCP for MEDIA_INACTIVITY_TIMEOUT_MS */
  | 'media_timeout';

export function hangupReasonFor(direction: CallDirection, lastStatus: CallStatus, cause: HangupCause): HangupReason {
  const early = lastStatus === 'dialing' || lastStatus === 'ringing';
  // a dead peer (either direction): the reason is its own, hangup_by says the far end (remote)
  if (lastStatus === 'progressing' && (cause === 'session_expired' || cause === 'media_timeout')) return cause;
  if (direction === 'incoming') {
    // refused before the answer: 480 / 603 (TwiML <Reject>'s default) say no answer, 486 busy
    if (early && (cause === 'no_answer' || cause === 'call_rejected')) return 'noanswer';
    if (early && cause === 'user_busy') return 'busy';
    if (lastStatus === 'progressing' && cause === 'duration_timeout') return 'timeout';
    return 'normal';
  }
  if (early) {
    if (cause === 'no_answer' || cause === 'call_rejected') return 'noanswer';
    if (cause === 'user_busy') return 'busy';
    if (cause === 'normal_clearing' || cause === 'answered_elsewhere') return 'normal';
    if (cause === 'unknown') return 'dialout';
    return 'failed';
  }
  if (lastStatus === 'progressing' && cause === 'duration_timeout') return 'timeout';
  if (lastStatus === 'terminating' && cause === 'amd') return 'amd';
  if (lastStatus === 'canceling') return 'cancel';
  return 'normal';
}

/** Maps a SIP final response status of a failed outbound INVITE to a hangup cause. */
export function causeFromSipStatus(status: number): HangupCause {
  if (status === 486 || status === 600) return 'user_busy';
  if (status === 408 || status === 480) return 'no_answer';
  if (status === 603) return 'call_rejected';
  if (status === 487) return 'normal_clearing';
  if (status >= 300 && status < 700) return 'failure';
  return 'unknown';
}

/** Platform defaults, VoIPbin's own: one hour of talk, 60 s to answer. */
export const DEFAULT_MAX_DURATION_MS = 3_600_000;
export const DEFAULT_DIAL_TIMEOUT_MS = 60_000;
