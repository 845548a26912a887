/**
 * The state a plain G.711 leg or an Opus pass-through one carries between JS and C (native/rtp_legs.c, rtp_legs.h: the same
 * indices): a Float64Array of LEG_STATE_SIZE numbers and an Int16Array of LEG_STATE_SAMPLES samples
 * (the jitter buffer's last frame, then its entries' samples in order).
 */
export const LS = {
  SSRC: 0,
  SEQ: 1,
  TS: 2,
  PACKETS_SENT: 3,
  OCTETS_SENT: 4,
  REMOTE_IP: 5,
  REMOTE_PORT: 6,
  RTCP_IP: 7,
  RTCP_PORT: 8,
  LATCHED: 9,
  LAST_FROM_REMOTE: 10,
  /** -1: none yet */
  REMOTE_SSRC: 11,
  SAW_EVENT: 12,
  /** 0 (PCMU) or 8 (PCMA): the law sent */
  LAW_OUT: 13,
  PT: 14,
  /** -1: no telephone-event negotiated */
  DTMF_PT: 15,
  /** the law of the negotiated payload type (0, 8), -1 when it is not G.711 */
  PT_LAW: 16,
  NEXT_RTCP: 17,
  /** C latched the RTCP address since the last read */
  RTCP_LATCHED: 18,
  /** 1: an Opus pass-through leg (its packets go on to the peer as they come; no jitter buffer in C) */
  PASS: 19,
  ST_STARTED: 20,
  ST_SSRC: 21,
  ST_BASE: 22,
  ST_MAX: 23,
  ST_CYCLES: 24,
  ST_RECEIVED: 25,
  ST_EXP_PRIOR: 26,
  ST_REC_PRIOR: 27,
  ST_JITTER: 28,
  /** NaN: none yet */
  ST_TRANSIT: 29,
  ST_OOO: 30,
  ST_DUP: 31,
  /** the RTP clock per ms: 8 (G.711), 48 (Opus) */
  TICKS_PER_MS: 32,
  /** packets sent on as they arrived at the peer (Opus pass-through) */
  FORWARDED: 33,
  JB_STARTED: 34,
  JB_PLAY_TS: 35,
  JB_TARGET: 36,
  JB_CALM: 37,
  JB_CONCEAL_RUN: 38,
  JB_PLAYED_ANY: 39,
  JB_LATE: 40,
  JB_CONCEALED: 41,
  JB_DROPPED: 42,
  JB_COUNT: 43,
  /** an Opus pass-through leg: 1 while its mapping of the peer's numbers onto its stream goes on (RtpSession.passNextSeq) */
  PASS_MAPPED: 44,
  /** that mapping's sequence-number delta (16 bits) */
  PASS_SEQ_DELTA: 45,
  EV_ACTIVE: 46,
  EV_TS: 47,
  EV_EVENT: 48,
  EV_DURATION: 49,
  EV_LAST_SEEN: 50,
  EV_REPORTED_N: 51,
  /** that mapping's timestamp delta (32 bits, signed) */
  PASS_TS_DELTA: 52,
  /** frames a stall of the worker skipped (the jitter buffer's `stalled`) */
  JB_STALLED: 53,
  /** RTP packets dropped by source (strict RTP, worker/rtp-source.ts): another source once latched, or one on probation */
  FOREIGN_DROPPED: 54,
  /** the source on probation (worker/rtp-source.ts): its address (32-bit, signed), port, last sequence number, packets in sequence (0: none) */
  CAND_IP: 55,
  CAND_PORT: 56,
  CAND_SEQ: 57,
  CAND_COUNT: 58,
  /** the address and port the SDP names (worker/rtp-source.ts: latched at any of its packets; port 0: none) */
  SIGNALLED_IP: 59,
  SIGNALLED_PORT: 60,
  /** 128 entries */
  SEEN: 64,
  /** ts, len per entry (at most JB_CAP) */
  JB_ENTRIES: 192,
  /** up to 32 timestamps, oldest first */
  EV_REPORTED: 280,
  /** digits C reported but had not handed out yet (read from C only: a detached leg's JS hands them out) */
  EV_PEND_N: 320,
  /** 3 per digit: event, duration (ticks), RTP timestamp */
  EV_PEND: 321,
} as const;
export const LEG_STATE_SIZE = 336;
export const LEG_JB_CAP = 40;
export const LEG_STATE_SAMPLES = 160 + LEG_JB_CAP * 1600;
/** the events arena after a tick: [count, then per event: kind, fd, then a digit's event, duration (ticks), SSRC, RTP timestamp] */
export const LEG_EVENT_DTMF = 1;
export const LEG_EVENT_RTCP = 2;
export const LEG_EVENT_META = 6;
