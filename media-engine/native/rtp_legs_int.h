/*
 * The C legs' own structures (rtp_legs.c: the per-packet and per-tick path; rtp_legs_jitter.c: their
 * jitter buffer; rtp_legs_state.c: moving a leg's state between JS and C, and the N-API functions).
 * Private to those three files.
 */
#ifndef OPENVOICE_RTP_LEGS_INT_H
#define OPENVOICE_RTP_LEGS_INT_H
#include "rtp_legs.h"
#include <stdint.h>
#include <netinet/in.h>

#define EV_SLOTS 256
#define EV_META 6 /* kind, fd, event, samples, ssrc, event timestamp (after a header: count) */
enum { EV_DTMF = 1, EV_RTCP = 2 };
#define RELATCH_AFTER_MS 1000  /* rtp-source.ts: silence of the latched source after which another may take its place */
#define LEARN_MIN_SEQUENTIAL 4 /* rtp-source.ts: packets in sequence a source other than the SDP's sends before it is latched */
#define RTCP_INTERVAL_MS 5000
#define MAX_FRAMES 8
#define MIN_FRAMES 1
#define JB_CALM_POPS 500 /* jitter-buffer.ts CALM_TICKS: 10 s without a reason to keep a grown frame */
#define JB_QUIET 128     /* jitter-buffer.ts QUIET: mean |sample| of a quiet frame */
#define FW_SLOTS 8         /* packets an Opus pass-through leg may have queued between two submits */
#define FW_MAX_PAYLOAD 1500 /* opus-pass.ts MAX_PASS_PAYLOAD */

/* an Opus pass-through leg's sending side (opus-pass.ts, RtpSession.forwardFrom): its peer's packets under
   our SSRC, their numbers moved onto our stream by deltas anchored at the first one (gaps kept) */
typedef struct fwd {
  int anchor; /* 1: the next packet starts a new mapping (attach, the source restarted) */
  uint16_t seq_delta;
  int32_t ts_delta;
  unsigned gen; /* the legs' submit count when `n` was last reset */
  int n, i;     /* packets queued since that submit; the next slot */
  unsigned char pkt[FW_SLOTS][12 + FW_MAX_PAYLOAD];
  struct msghdr h[FW_SLOTS];
  struct iovec iov[FW_SLOTS];
  struct sockaddr_in to[FW_SLOTS];
  struct fwd *retired_next; /* on the legs' retired list: its leg left while its packets waited for a submit */
} fwd_t;

typedef struct {
  int32_t ts;
  int len, cap;
  int16_t *s;
} jentry_t;

typedef struct leg {
  int fd, peer_fd;
  int pass, ticks_per_ms; /* an Opus pass-through leg (fw set); the RTP clock per ms */
  fwd_t *fw;
  double forwarded;
  /* sending */
  uint32_t ssrc;
  uint16_t seq;
  int32_t ts;
  double packets_sent, octets_sent, next_rtcp;
  int law_out, pt, dtmf_pt, pt_law;
  uint32_t remote_ip, rtcp_ip;
  uint16_t remote_port, rtcp_port;
  int latched, rtcp_latched, saw_event;
  double last_from_remote;
  /* strict RTP (rtp-source.ts): RTP dropped by source, and the source on probation (cand_count 0: none) */
  double foreign_dropped;
  uint32_t cand_ip;
  uint16_t cand_port;
  int cand_seq, cand_count;
  uint32_t sig_ip; /* the address and port the SDP names (sig_port 0: none): latched at any of its packets */
  uint16_t sig_port;
  int64_t remote_ssrc; /* -1: none yet */
  /* receive statistics */
  int st_started;
  uint32_t st_ssrc;
  int st_base, st_max;
  double st_cycles, st_received, st_exp_prior, st_rec_prior, st_jitter, st_ooo, st_dup;
  int st_has_transit;
  int32_t st_transit;
  uint8_t seen[LS_SEEN_N];
  /* jitter buffer */
  jentry_t ent[JB_CAP + 1];
  jentry_t *ring[JB_CAP + 1];
  jentry_t *pool[JB_CAP + 1];
  int head, count, npool;
  int jb_started, target, calm, conceal_run, played_any;
  int32_t play_ts;
  int skipped;                     /* 1: a stall skipped [skipped_from, skipped_to) since the last start (jb_skip) */
  int32_t skipped_from, skipped_to;
  double late, concealed, dropped;
  double stalled; /* frames a stall of the worker skipped: dropped, not the far end's loss (jitter-buffer.ts) */
  int16_t last[LEG_FRAME];
  /* telephone events */
  int ev_active;
  uint32_t ev_ts;
  int ev_event, ev_duration;
  double ev_last_seen;
  uint32_t reported[LS_REPORTED_N];
  int nreported;
  int pend_event[4], pend_samples[4], npend;
  uint32_t pend_ts[4];
  /* this tick */
  int has_in;
  int16_t in[LEG_FRAME];
  unsigned char pkt[2][12 + LEG_FRAME];
  int pkt_i;
  struct msghdr h[2];
  struct iovec iov[2];
  struct sockaddr_in to[2];
} leg_t;

struct legs {
  leg_t **by_fd;
  size_t nfd;
  leg_t **list;
  int n, cap;
  int16_t mu_dec[256], a_dec[256];
  uint8_t *mu_enc, *a_enc;
  double time_origin;
  double *ev;
  napi_ref ev_ref;
  int ready;
  unsigned submits; /* the ring's submits so far (legs_submitted) */
  fwd_t *retired;   /* buffers of legs gone with packets not yet submitted: freed at the next submit */
};


static inline leg_t *leg_of(legs_t *l, int fd) { return fd >= 0 && (size_t)fd < l->nfd ? l->by_fd[fd] : NULL; }
static inline jentry_t *jat(leg_t *g, int k) { return g->ring[(g->head + k) % (JB_CAP + 1)]; }
/* the place of a packet of `len` samples at `ts` in the leg's jitter buffer, or NULL (late, duplicate, no memory) */
int16_t *jb_reserve(leg_t *g, int32_t ts, int len);
/* empties the leg's jitter buffer: the next packet starts it again (a new source) */
void jb_reset(leg_t *g);
/* a stall skipped `frames` pops: the playout point moves on by as many, what was due meanwhile counted late */
void jb_skip(leg_t *g, int frames);
/* the leg's next frame into `out` (concealed or silence when none): 0 when nothing has been played yet */
int jb_pop(leg_t *g, int16_t *out);
/* takes the leg out (its socket no longer reaches it) and frees it */
void remove_leg(legs_t *l, leg_t *g);
/* RTP timestamp a - b, wrapping */
static inline int32_t ts_diff(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

#endif
