/*
 * Plain G.711 legs in C (media-engine/worker/c-legs.ts decides which): two bridged legs with nothing
 * but each other, served once per 20 ms inside the ring's end-of-tick flush, without a crossing to JS
 * per leg. An Opus↔Opus pair that forwards (opus-pass.ts) is served here too: each packet goes on to the
 * peer's far end as it is taken from the ring, as RtpSession.forwardFrom sends it, and the tick only
 * hands out digits and RTCP times. Each does what rtp-session.ts and leg.ts do for such a leg, in the same order and with the
 * same figures: symmetric RTP latching, the receive statistics (RFC 3550 A.1/A.3/A.8, duplicates and
 * out-of-order), the adaptive jitter buffer (rtp_legs_jitter.c: reorder, late and duplicate drop, concealment; SSRC change),
 * RFC 4733 telephone-event detection, the peer's frame as this leg's audio, G.711 with the JS tables
 * (handed over by legsInit, so both paths encode alike) and the RTP header. RTCP stays in JS: a leg
 * whose report is due is announced in the events arena and JS reads its state to build it.
 * JS moves a leg here (attachLeg, with its whole state) and back (detachLeg) when its needs change.
 */
#define _GNU_SOURCE
#include "rtp_legs_int.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

static const int16_t SILENCE[LEG_FRAME];

legs_t *legs_new(void) { return calloc(1, sizeof(legs_t)); }

static void free_retired(legs_t *l) {
  while (l->retired) {
    fwd_t *f = l->retired;
    l->retired = f->retired_next;
    free(f);
  }
}

static void leg_free(legs_t *l, leg_t *g) {
  for (int i = 0; i <= JB_CAP; i++) free(g->ent[i].s);
  fwd_t *f = g->fw;
  if (f && f->n > 0 && f->gen == l->submits) {
    /* packets it forwarded are queued on the ring, their msghdr and bytes here: kept until the next submit */
    f->retired_next = l->retired;
    l->retired = f;
  } else free(f);
  free(g);
}

void legs_free(legs_t *l) {
  if (!l) return;
  for (int i = 0; i < l->n; i++) leg_free(l, l->list[i]);
  free_retired(l);
  free(l->list);
  free(l->by_fd);
  free(l->mu_enc);
  free(l->a_enc);
  free(l);
}

void remove_leg(legs_t *l, leg_t *g) {
  l->by_fd[g->fd] = NULL;
  for (int i = 0; i < l->n; i++)
    if (l->list[i] == g) {
      l->list[i] = l->list[--l->n];
      break;
    }
  leg_free(l, g);
}

void legs_forget(legs_t *l, int fd) {
  leg_t *g = l ? leg_of(l, fd) : NULL;
  if (g) remove_leg(l, g);
}

/* ---- receive statistics: receive-stats.ts */

static void st_reset(leg_t *g, uint32_t ssrc, int seq) {
  g->st_ssrc = ssrc;
  g->st_base = g->st_max = seq;
  g->st_cycles = g->st_received = g->st_exp_prior = g->st_rec_prior = g->st_jitter = 0;
  g->st_has_transit = 0;
  g->st_started = 1;
  g->st_ooo = g->st_dup = 0;
  memset(g->seen, 0, sizeof g->seen);
}

static void st_packet(leg_t *g, uint32_t ssrc, int seq, int32_t ts, int32_t arrival_ts) {
  if (!g->st_started || ssrc != g->st_ssrc) st_reset(g, ssrc, seq);
  int delta = (seq - g->st_max) & 0xffff;
  int slot = seq & (LS_SEEN_N - 1);
  uint8_t tag = (uint8_t)(1 + ((seq >> 7) & 0x7f));
  if (delta == 0 && g->st_received > 0) {
    g->st_dup++;
    return;
  }
  if (delta < 0x8000) {
    int n = delta < LS_SEEN_N ? delta : LS_SEEN_N;
    for (int k = 1; k < n; k++) g->seen[(seq - k) & (LS_SEEN_N - 1)] = 0;
    if (seq < g->st_max) g->st_cycles += 0x10000;
    g->st_max = seq;
  } else if (0x10000 - delta < LS_SEEN_N) {
    if (g->seen[slot] == tag) {
      g->st_dup++;
      return;
    }
    g->st_ooo++;
  } else g->st_ooo++;
  g->seen[slot] = tag;
  g->st_received++;
  int32_t transit = (int32_t)((uint32_t)arrival_ts - (uint32_t)ts);
  if (g->st_has_transit) {
    int32_t d = (int32_t)((uint32_t)transit - (uint32_t)g->st_transit);
    double ad = d < 0 ? -(double)d : (double)d;
    g->st_jitter += (ad - g->st_jitter) / 16;
  }
  g->st_transit = transit;
  g->st_has_transit = 1;
}

/* ---- telephone events: TelephoneEventReceiver (events 0..15 are DTMF) */

static void ev_report(leg_t *g) {
  g->ev_active = 0;
  for (int i = 0; i < g->nreported; i++)
    if (g->reported[i] == g->ev_ts) return;
  if (g->nreported == LS_REPORTED_N) {
    memmove(g->reported, g->reported + 1, (LS_REPORTED_N - 1) * sizeof g->reported[0]);
    g->nreported--;
  }
  g->reported[g->nreported++] = g->ev_ts;
  if (g->npend < 4) {
    g->pend_event[g->npend] = g->ev_event;
    g->pend_ts[g->npend] = g->ev_ts;
    g->pend_samples[g->npend++] = g->ev_duration;
  }
}

static void ev_packet(leg_t *g, uint32_t ts, const unsigned char *p, int len, double now) {
  if (len < 4 || p[0] >= 16) return;
  for (int i = 0; i < g->nreported; i++)
    if (g->reported[i] == ts) return;
  int duration = (p[2] << 8) | p[3];
  if (g->ev_active && g->ev_ts != ts) ev_report(g);
  if (!g->ev_active || g->ev_ts != ts) {
    g->ev_active = 1;
    g->ev_ts = ts;
    g->ev_event = p[0];
    g->ev_duration = duration;
  }
  if (duration > g->ev_duration) g->ev_duration = duration;
  g->ev_last_seen = now;
  if (p[1] & 0x80) ev_report(g);
}

/* ---- sending: the RTP header, and one datagram's msghdr (it must live until the ring's next submit) */

static void rtp_header(unsigned char *pk, int marker, int pt, uint16_t seq, uint32_t ts, uint32_t ssrc) {
  pk[0] = 0x80;
  pk[1] = (unsigned char)((marker ? 0x80 : 0) | (pt & 0x7f));
  pk[2] = (unsigned char)(seq >> 8);
  pk[3] = (unsigned char)seq;
  pk[4] = (unsigned char)(ts >> 24);
  pk[5] = (unsigned char)(ts >> 16);
  pk[6] = (unsigned char)(ts >> 8);
  pk[7] = (unsigned char)ts;
  pk[8] = (unsigned char)(ssrc >> 24);
  pk[9] = (unsigned char)(ssrc >> 16);
  pk[10] = (unsigned char)(ssrc >> 8);
  pk[11] = (unsigned char)ssrc;
}

/* `len` bytes at `pk` to the leg's far end, through `h`, `iov` and `to` (the caller's, kept until the submit) */
static struct msghdr *datagram(struct msghdr *h, struct iovec *iov, struct sockaddr_in *to, unsigned char *pk, size_t len, const leg_t *g) {
  memset(to, 0, sizeof *to);
  to->sin_family = AF_INET;
  to->sin_addr.s_addr = htonl(g->remote_ip);
  to->sin_port = htons(g->remote_port);
  iov->iov_base = pk;
  iov->iov_len = len;
  memset(h, 0, sizeof *h);
  h->msg_name = to;
  h->msg_namelen = sizeof *to;
  h->msg_iov = iov;
  h->msg_iovlen = 1;
  return h;
}

/* ---- Opus pass-through: RtpSession.forwardFrom / forwardOne */

/* frame length in 48 kHz samples by TOC configuration (RFC 6716 §3.1; opus-pass.ts opusTicks) */
static int opus_ticks(const unsigned char *b, int len) {
  static const int SILK[4] = { 480, 960, 1920, 2880 }, CELT[4] = { 120, 240, 480, 960 };
  if (len < 1) return 0;
  int config = b[0] >> 3;
  int size = config < 12 ? SILK[config & 3] : config < 16 ? (config & 1 ? 960 : 480) : CELT[config & 3];
  int code = b[0] & 3;
  int frames = code == 0 ? 1 : code < 3 ? 2 : len > 1 ? b[1] & 0x3f : 0;
  return size * frames;
}

void legs_submitted(legs_t *l) {
  if (!l) return;
  l->submits++;
  free_retired(l);
}

/* sends `len` bytes of payload received by `src` on from `dst` under its own SSRC, numbers moved onto its stream */
static void forward(legs_t *l, leg_t *dst, const unsigned char *payload, int len, int seq, int32_t ts, int marker, legs_send_fn send, legs_submit_fn submit,
                    void *ring) {
  fwd_t *f = dst->fw;
  if (f->gen != l->submits) {
    f->gen = l->submits;
    f->n = 0;
  }
  /* every buffer waits for the submit (a burst after a stall: what the sockets held comes in one flush):
     submit now, as a send that finds JS's queue full flushes it; dropped only when the kernel took none */
  if (f->n == FW_SLOTS) {
    if (!submit(ring)) return; /* (counted in the ring's sendErrors) */
    f->gen = l->submits;
    f->n = 0;
  }
  if (f->anchor) {
    f->anchor = 0;
    f->seq_delta = (uint16_t)(dst->seq - seq);
    f->ts_delta = (int32_t)((uint32_t)dst->ts - (uint32_t)ts);
  }
  uint16_t out_seq = (uint16_t)(seq + f->seq_delta);
  uint32_t out_ts = (uint32_t)ts + (uint32_t)f->ts_delta;
  int k = f->i;
  f->i = (k + 1) % FW_SLOTS;
  f->n++;
  unsigned char *pk = f->pkt[k];
  rtp_header(pk, marker, dst->pt, out_seq, out_ts, dst->ssrc);
  memcpy(pk + 12, payload, (size_t)len);
  send(ring, dst->fd, datagram(&f->h[k], &f->iov[k], &f->to[k], pk, 12 + (size_t)len, dst));
  dst->packets_sent++;
  dst->octets_sent += len;
  dst->forwarded++;
  /* a packet reordered before one already sent goes out with its own number; our stream does not step back */
  if ((uint16_t)(out_seq - dst->seq) < 0x8000) {
    dst->seq = (uint16_t)(out_seq + 1);
    dst->ts = (int32_t)(out_ts + (uint32_t)opus_ticks(payload, len));
  }
}

/* ---- strict RTP: SourceLatch.admit (rtp-source.ts, where the choices are explained) */

/* `rtcp`: RTCP goes to the source's port + 1 even if one was latched before (the signalled address taking it back) */
static void latch(leg_t *g, uint32_t ip, uint16_t port, int rtcp) {
  if (!g->latched || rtcp) {
    g->rtcp_ip = ip;
    g->rtcp_port = (uint16_t)(port + 1);
    g->rtcp_latched = 1;
  }
  g->remote_ip = ip;
  g->remote_port = port;
  g->latched = 1;
}

/* a packet of a source that may be learnt: 1 once it sent LEARN_MIN_SEQUENTIAL in sequence (its probation ends) */
static int on_probation(leg_t *g, uint32_t ip, uint16_t port, int seq) {
  if (g->cand_count > 0 && ip == g->cand_ip && port == g->cand_port && seq == ((g->cand_seq + 1) & 0xffff)) g->cand_count++;
  else {
    g->cand_ip = ip;
    g->cand_port = port;
    g->cand_count = 1;
  }
  g->cand_seq = seq;
  if (g->cand_count < LEARN_MIN_SEQUENTIAL) return 0;
  g->cand_count = 0;
  return 1;
}

/* 1: the packet from ip:port is taken (latched as it goes: the SDP's address at any of its packets, another after its
   probation, port 0 never latched to, taken from the latched IP); 0: dropped before anything reads it, and counted */
static int admit(leg_t *g, uint32_t ip, uint16_t port, int seq, double arrival) {
  if (ip == g->remote_ip && port == g->remote_port) {
    if (!g->latched) latch(g, ip, port, 0);
    g->last_from_remote = arrival;
    g->cand_count = 0;
    return 1;
  }
  if (port != 0 && ip == g->sig_ip && port == g->sig_port) {
    /* the SDP's address while another source is latched (learnt in its silence, or before its first packet): it takes the latch back */
    latch(g, ip, port, 1);
    g->last_from_remote = arrival;
    g->cand_count = 0;
    return 1;
  }
  if (port == 0) {
    /* a raw-socket sender on the far end's host (sipp's pcap play): no ordinary socket sends from port 0, and one
       that can forge it can forge the latched address too, so the latched IP's port-0 packets are taken */
    if (!g->latched || ip == g->remote_ip) return 1;
  } else if ((!g->latched || arrival - g->last_from_remote > RELATCH_AFTER_MS) && on_probation(g, ip, port, seq)) {
    latch(g, ip, port, 0);
    g->last_from_remote = arrival;
    return 1;
  }
  g->foreign_dropped++;
  return 0;
}

/* ---- the receive path: RtpSession.onRtp for a G.711 leg or an Opus pass-through one */

int legs_packet(legs_t *l, int fd, const unsigned char *b, unsigned len, uint32_t ip, uint16_t port, double arrival, legs_send_fn send, legs_submit_fn submit,
                void *ring) {
  leg_t *g = leg_of(l, fd);
  if (!g) return 0;
  if (len >= 8 && b[0] >> 6 == 2 && b[1] >= 192 && b[1] <= 223) return 0; /* RTCP on the RTP port: JS's */
  if (len < 12 || b[0] >> 6 != 2) return 1;
  unsigned off = 12 + (b[0] & 0x0f) * 4;
  if (len < off) return 1;
  if (b[0] & 0x10) {
    if (len < off + 4) return 1;
    unsigned end = off + 4 + ((unsigned)((b[off + 2] << 8) | b[off + 3])) * 4;
    if (len < end) return 1;
    off = end;
  }
  unsigned end = len;
  if (b[0] & 0x20) {
    unsigned pad = b[len - 1];
    if (pad == 0 || end - pad < off || pad > end) return 1;
    end -= pad;
  }
  int pt = b[1] & 0x7f;
  int seq = (b[2] << 8) | b[3];
  int32_t ts = (int32_t)(((uint32_t)b[4] << 24) | ((uint32_t)b[5] << 16) | ((uint32_t)b[6] << 8) | b[7]);
  uint32_t ssrc = ((uint32_t)b[8] << 24) | ((uint32_t)b[9] << 16) | ((uint32_t)b[10] << 8) | b[11];
  if (!admit(g, ip, port, seq, arrival)) return 1;
  leg_t *peer = g->pass ? leg_of(l, g->peer_fd) : NULL;
  if (g->remote_ssrc != (int64_t)ssrc) {
    g->remote_ssrc = ssrc;
    jb_reset(g);
    if (peer && peer->fw) peer->fw->anchor = 1; /* a new source: the peer starts a new mapping */
  }
  st_packet(g, ssrc, seq, ts, (int32_t)(uint32_t)(int64_t)floor(arrival * g->ticks_per_ms + 0.5));
  if (g->dtmf_pt >= 0 && pt == g->dtmf_pt) {
    g->saw_event = 1;
    ev_packet(g, (uint32_t)ts, b + off, (int)(end - off), l->time_origin + arrival);
    return 1;
  }
  if (g->pass) {
    int bytes = (int)(end - off);
    if (pt != g->pt || bytes == 0 || bytes > FW_MAX_PAYLOAD) return 1;
    if (peer && peer->fw && peer->remote_port != 0) forward(l, peer, b + off, bytes, seq, ts, b[1] & 0x80, send, submit, ring);
    return 1;
  }
  int law;
  if (pt == 0) law = 0;
  else if (pt == 8) law = 8;
  else if (pt == g->pt && g->pt_law >= 0) law = g->pt_law;
  else return 1;
  int bytes = (int)(end - off);
  if (bytes == 0 || bytes > 1600) return 1;
  int16_t *into = jb_reserve(g, ts, bytes);
  if (!into) return 1;
  const int16_t *dec = law == 0 ? l->mu_dec : l->a_dec;
  for (int k = 0; k < bytes; k++) into[k] = dec[b[off + k]];
  return 1;
}

/* ---- the tick: every leg receives, then every leg sends its peer's frame */

static void emit(legs_t *l, int kind, int fd, double a, double b, double c, double d) {
  int n = (int)l->ev[0];
  if (n >= EV_SLOTS) return;
  double *m = l->ev + 1 + (size_t)n * EV_META;
  m[0] = kind;
  m[1] = fd;
  m[2] = a;
  m[3] = b;
  m[4] = c;
  m[5] = d;
  l->ev[0] = n + 1;
}

void legs_tick(legs_t *l, double now, int skip, legs_send_fn send, void *ring) {
  l->ev[0] = 0;
  for (int i = 0; i < l->n; i++) {
    leg_t *g = l->list[i];
    if (g->ev_active && now - g->ev_last_seen > 300) ev_report(g);
    if (g->pass) continue; /* what it receives went on as it came; it sends only that */
    if (skip > 0) {
      g->ts = (int32_t)((uint32_t)g->ts + (uint32_t)(skip * LEG_FRAME));
      jb_skip(g, skip); /* the playout point with it: left behind, the far end was heard the stall's length late */
    }
    g->has_in = jb_pop(g, g->in);
  }
  for (int i = 0; i < l->n; i++) {
    leg_t *g = l->list[i];
    leg_t *p = leg_of(l, g->peer_fd);
    const int16_t *src = p && p->has_in ? p->in : SILENCE;
    if (!g->pass && g->remote_port != 0) {
      int k = g->pkt_i;
      g->pkt_i ^= 1;
      unsigned char *pk = g->pkt[k];
      rtp_header(pk, 0, g->pt, g->seq, (uint32_t)g->ts, g->ssrc);
      const uint8_t *enc = g->law_out == 0 ? l->mu_enc : l->a_enc;
      for (int s = 0; s < LEG_FRAME; s++) pk[12 + s] = enc[(uint16_t)src[s]];
      g->seq = (uint16_t)(g->seq + 1);
      g->packets_sent++;
      g->octets_sent += LEG_FRAME;
      send(ring, g->fd, datagram(&g->h[k], &g->iov[k], &g->to[k], pk, 12 + LEG_FRAME, g));
    }
    if (!g->pass) g->ts = (int32_t)((uint32_t)g->ts + LEG_FRAME);
    for (int k = 0; k < g->npend; k++) emit(l, EV_DTMF, g->fd, g->pend_event[k], g->pend_samples[k], (double)g->remote_ssrc, g->pend_ts[k]);
    g->npend = 0;
    if (now >= g->next_rtcp) {
      g->next_rtcp = now + RTCP_INTERVAL_MS * (0.5 + (double)rand() / RAND_MAX);
      emit(l, EV_RTCP, g->fd, 0, 0, 0, 0);
    }
  }
}

