/*
 * Plain G.711 legs and Opus pass-through pairs served in C beside the io_uring (rtp_legs.c): the interface between the ring
 * (rtp_uring.c, which owns the sockets and the system calls) and the legs (which own their RTP state).
 * The state a leg carries between C and JS is a Float64Array laid out as LS_* below (the same indices
 * as media-engine/native/leg-layout.ts) plus an Int16Array of its jitter buffer's samples.
 */
#ifndef OPENVOICE_RTP_LEGS_H
#define OPENVOICE_RTP_LEGS_H
#include <node_api.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct legs legs_t;

/* queues one packet of a leg for sending (the ring's sendmsg; the msghdr stays valid until the next submit) */
typedef void (*legs_send_fn)(void *ring, int fd, struct msghdr *h);
/* submits what is queued now (a leg's forward buffers are all waiting); 1 when the kernel took every
   queued entry (legs_submitted was then called), 0 when some are still queued */
typedef int (*legs_submit_fn)(void *ring);

/* the state vector's layout (Float64Array), shared with leg-layout.ts */
enum {
  LS_SSRC, LS_SEQ, LS_TS, LS_PACKETS_SENT, LS_OCTETS_SENT, LS_REMOTE_IP, LS_REMOTE_PORT, LS_RTCP_IP, LS_RTCP_PORT,
  LS_LATCHED, LS_LAST_FROM_REMOTE, LS_REMOTE_SSRC, LS_SAW_EVENT, LS_LAW_OUT, LS_PT, LS_DTMF_PT, LS_PT_LAW,
  LS_NEXT_RTCP, LS_RTCP_LATCHED,
  LS_PASS, /* 1: an Opus leg whose packets go on to its peer as they come (no decode, no jitter buffer) */
  /* receive statistics (receive-stats.ts) */
  LS_ST_STARTED = 20, LS_ST_SSRC, LS_ST_BASE, LS_ST_MAX, LS_ST_CYCLES, LS_ST_RECEIVED, LS_ST_EXP_PRIOR, LS_ST_REC_PRIOR,
  LS_ST_JITTER, LS_ST_TRANSIT, LS_ST_OOO, LS_ST_DUP,
  LS_TICKS_PER_MS, /* the RTP clock: 8 (G.711), 48 (Opus) */
  LS_FORWARDED,    /* packets sent on as they arrived at the peer (Opus pass-through) */
  /* jitter buffer (jitter-buffer.ts) */
  LS_JB_STARTED = 34, LS_JB_PLAY_TS, LS_JB_TARGET, LS_JB_CALM, LS_JB_CONCEAL_RUN, LS_JB_PLAYED_ANY, LS_JB_LATE,
  LS_JB_CONCEALED, LS_JB_DROPPED, LS_JB_COUNT,
  /* an Opus pass-through leg's sending side: 1 while its mapping of the peer's numbers goes on, and the deltas */
  LS_PASS_MAPPED = 44, LS_PASS_SEQ_DELTA,
  /* telephone-event receiver (telephone-event.ts) */
  LS_EV_ACTIVE = 46, LS_EV_TS, LS_EV_EVENT, LS_EV_DURATION, LS_EV_LAST_SEEN, LS_EV_REPORTED_N,
  LS_PASS_TS_DELTA = 52,
  LS_JB_STALLED = 53,    /* frames a stall of the worker skipped (jitter-buffer.ts `stalled`) */
  LS_FOREIGN_DROPPED = 54, /* strict RTP (rtp-source.ts): RTP dropped by source; then the source on probation */
  LS_CAND_IP, LS_CAND_PORT, LS_CAND_SEQ, LS_CAND_COUNT,
  LS_SIGNALLED_IP, LS_SIGNALLED_PORT, /* the address the SDP names (port 0: none): latched at any of its packets */
  LS_SEEN = 64,          /* 128 entries: the receive statistics' duplicate window */
  LS_JB_ENTRIES = 192,   /* 2 per entry: ts, len (samples in the Int16Array after `last`, in order) */
  LS_EV_REPORTED = 280,  /* up to 32 reported event timestamps, oldest first */
  LS_EV_PEND_N = 320,    /* digits reported in C but not yet handed out (export only: JS hands them out on detach) */
  LS_EV_PEND = 321,      /* 3 per digit: event, duration (ticks), RTP timestamp */
  LS_SIZE = 336
};
#define LS_SEEN_N 128
#define LS_REPORTED_N 32
#define LEG_FRAME 160
/* the jitter buffer's capacity (maxFrames 8 * 4 + 8) and the samples its state can carry */
#define JB_CAP 40
#define LS_SAMPLES (LEG_FRAME + JB_CAP * 1600)

legs_t *legs_new(void);
void legs_free(legs_t *l);
/* a received datagram on fd: 1 when a C leg took it (RTCP multiplexed on RTP is left to JS: 0); an Opus
   pass-through leg's packet is queued to its peer's far end at once with `send` */
int legs_packet(legs_t *l, int fd, const unsigned char *buf, unsigned len, uint32_t ip, uint16_t port, double arrival, legs_send_fn send, legs_submit_fn submit, void *ring);
/* the ring's submit took every queued entry: the buffers of forwarded packets are free again */
void legs_submitted(legs_t *l);
/* serves every leg once (receive → jitter → bridge → G.711 → send), `skip` frames skipped before */
void legs_tick(legs_t *l, double now, int skip, legs_send_fn send, void *ring);
/* a socket is closing: its leg (if any) is dropped */
void legs_forget(legs_t *l, int fd);
/* the N-API functions (legsInit, attachLeg, detachLeg, readLeg), added to the module's exports */
void legs_define(napi_env env, napi_value exports);
/* this thread's legs (rtp_uring.c): NULL before init() */
legs_t *uring_legs(napi_env env);
#endif
