/*
 * Moving a C leg's state between JS and C (the layout of rtp_legs.h, native/leg-layout.ts), and the
 * N-API functions of the C legs: legsInit, attachLeg, detachLeg, readLeg, legSource.
 */
#define _GNU_SOURCE
#include "rtp_legs_int.h"
#include "rtp_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- moving a leg's state between JS and C */

static void leg_import(leg_t *g, const double *v, const int16_t *samples) {
  g->ssrc = (uint32_t)v[LS_SSRC];
  g->seq = (uint16_t)v[LS_SEQ];
  g->ts = (int32_t)v[LS_TS];
  g->packets_sent = v[LS_PACKETS_SENT];
  g->octets_sent = v[LS_OCTETS_SENT];
  g->remote_ip = (uint32_t)(int32_t)v[LS_REMOTE_IP];
  g->remote_port = (uint16_t)v[LS_REMOTE_PORT];
  g->rtcp_ip = (uint32_t)(int32_t)v[LS_RTCP_IP];
  g->rtcp_port = (uint16_t)v[LS_RTCP_PORT];
  g->latched = v[LS_LATCHED] != 0;
  g->last_from_remote = v[LS_LAST_FROM_REMOTE];
  g->foreign_dropped = v[LS_FOREIGN_DROPPED];
  g->cand_ip = (uint32_t)(int32_t)v[LS_CAND_IP];
  g->cand_port = (uint16_t)v[LS_CAND_PORT];
  g->cand_seq = (int)v[LS_CAND_SEQ];
  g->cand_count = (int)v[LS_CAND_COUNT];
  g->sig_ip = (uint32_t)(int32_t)v[LS_SIGNALLED_IP];
  g->sig_port = (uint16_t)v[LS_SIGNALLED_PORT];
  g->remote_ssrc = v[LS_REMOTE_SSRC] < 0 ? -1 : (int64_t)v[LS_REMOTE_SSRC];
  g->saw_event = v[LS_SAW_EVENT] != 0;
  g->law_out = (int)v[LS_LAW_OUT];
  g->pt = (int)v[LS_PT];
  g->dtmf_pt = (int)v[LS_DTMF_PT];
  g->pt_law = (int)v[LS_PT_LAW];
  g->next_rtcp = v[LS_NEXT_RTCP];
  g->rtcp_latched = 0;
  g->ticks_per_ms = v[LS_TICKS_PER_MS] > 0 ? (int)v[LS_TICKS_PER_MS] : 8;
  g->forwarded = v[LS_FORWARDED];
  g->st_started = v[LS_ST_STARTED] != 0;
  g->st_ssrc = (uint32_t)v[LS_ST_SSRC];
  g->st_base = (int)v[LS_ST_BASE];
  g->st_max = (int)v[LS_ST_MAX];
  g->st_cycles = v[LS_ST_CYCLES];
  g->st_received = v[LS_ST_RECEIVED];
  g->st_exp_prior = v[LS_ST_EXP_PRIOR];
  g->st_rec_prior = v[LS_ST_REC_PRIOR];
  g->st_jitter = v[LS_ST_JITTER];
  g->st_has_transit = !isnan(v[LS_ST_TRANSIT]);
  g->st_transit = g->st_has_transit ? (int32_t)v[LS_ST_TRANSIT] : 0;
  g->st_ooo = v[LS_ST_OOO];
  g->st_dup = v[LS_ST_DUP];
  for (int i = 0; i < LS_SEEN_N; i++) g->seen[i] = (uint8_t)v[LS_SEEN + i];
  g->jb_started = v[LS_JB_STARTED] != 0;
  g->play_ts = (int32_t)v[LS_JB_PLAY_TS];
  g->skipped = 0; /* a stall's span skipped in JS is not carried over: a packet of it coming after the move is late and grows the buffer */
  g->target = (int)v[LS_JB_TARGET];
  g->calm = (int)v[LS_JB_CALM];
  g->conceal_run = (int)v[LS_JB_CONCEAL_RUN];
  g->played_any = v[LS_JB_PLAYED_ANY] != 0;
  g->late = v[LS_JB_LATE];
  g->stalled = v[LS_JB_STALLED];
  g->concealed = v[LS_JB_CONCEALED];
  g->dropped = v[LS_JB_DROPPED];
  memcpy(g->last, samples, sizeof g->last);
  int count = g->pass ? 0 : (int)v[LS_JB_COUNT]; /* a pass-through leg's buffer is empty and stays so */
  size_t at = LEG_FRAME;
  for (int i = 0; i < count && i < JB_CAP; i++) {
    int32_t ts = (int32_t)v[LS_JB_ENTRIES + 2 * i];
    int len = (int)v[LS_JB_ENTRIES + 2 * i + 1];
    if (len <= 0 || at + (size_t)len > LS_SAMPLES) break;
    /* the frame just played is still held (both buffers drop it at the next pop): not re-queued, or
       it would count as late and grow the buffer at every hand-over */
    if (g->jb_started && ts_diff((int32_t)((uint32_t)ts + (uint32_t)len), g->play_ts) <= 0) {
      at += (size_t)len;
      continue;
    }
    int16_t *s = jb_reserve(g, ts, len);
    if (s) memcpy(s, samples + at, (size_t)len * sizeof *s);
    at += (size_t)len;
  }
  g->ev_active = v[LS_EV_ACTIVE] != 0;
  g->ev_ts = (uint32_t)v[LS_EV_TS];
  g->ev_event = (int)v[LS_EV_EVENT];
  g->ev_duration = (int)v[LS_EV_DURATION];
  g->ev_last_seen = v[LS_EV_LAST_SEEN];
  g->nreported = (int)v[LS_EV_REPORTED_N];
  if (g->nreported > LS_REPORTED_N) g->nreported = LS_REPORTED_N;
  if (g->nreported < 0) g->nreported = 0;
  for (int i = 0; i < g->nreported; i++) g->reported[i] = (uint32_t)v[LS_EV_REPORTED + i];
  g->npend = 0; /* JS hands out what it detected itself */
}

static void leg_export(leg_t *g, double *v, int16_t *samples) {
  v[LS_SSRC] = g->ssrc;
  v[LS_SEQ] = g->seq;
  v[LS_TS] = g->ts;
  v[LS_PACKETS_SENT] = g->packets_sent;
  v[LS_OCTETS_SENT] = g->octets_sent;
  v[LS_REMOTE_IP] = (int32_t)g->remote_ip;
  v[LS_REMOTE_PORT] = g->remote_port;
  v[LS_RTCP_IP] = (int32_t)g->rtcp_ip;
  v[LS_RTCP_PORT] = g->rtcp_port;
  v[LS_LATCHED] = g->latched;
  v[LS_LAST_FROM_REMOTE] = g->last_from_remote;
  v[LS_FOREIGN_DROPPED] = g->foreign_dropped;
  v[LS_CAND_IP] = (int32_t)g->cand_ip;
  v[LS_CAND_PORT] = g->cand_port;
  v[LS_CAND_SEQ] = g->cand_seq;
  v[LS_CAND_COUNT] = g->cand_count;
  v[LS_SIGNALLED_IP] = (int32_t)g->sig_ip;
  v[LS_SIGNALLED_PORT] = g->sig_port;
  v[LS_REMOTE_SSRC] = (double)g->remote_ssrc;
  v[LS_SAW_EVENT] = g->saw_event;
  v[LS_LAW_OUT] = g->law_out;
  v[LS_PT] = g->pt;
  v[LS_DTMF_PT] = g->dtmf_pt;
  v[LS_PT_LAW] = g->pt_law;
  v[LS_NEXT_RTCP] = g->next_rtcp;
  v[LS_RTCP_LATCHED] = g->rtcp_latched;
  v[LS_PASS] = g->pass;
  v[LS_TICKS_PER_MS] = g->ticks_per_ms;
  v[LS_FORWARDED] = g->forwarded;
  v[LS_PASS_MAPPED] = g->fw && !g->fw->anchor;
  v[LS_PASS_SEQ_DELTA] = g->fw ? g->fw->seq_delta : 0;
  v[LS_PASS_TS_DELTA] = g->fw ? g->fw->ts_delta : 0;
  g->rtcp_latched = 0;
  v[LS_ST_STARTED] = g->st_started;
  v[LS_ST_SSRC] = g->st_ssrc;
  v[LS_ST_BASE] = g->st_base;
  v[LS_ST_MAX] = g->st_max;
  v[LS_ST_CYCLES] = g->st_cycles;
  v[LS_ST_RECEIVED] = g->st_received;
  v[LS_ST_EXP_PRIOR] = g->st_exp_prior;
  v[LS_ST_REC_PRIOR] = g->st_rec_prior;
  v[LS_ST_JITTER] = g->st_jitter;
  v[LS_ST_TRANSIT] = g->st_has_transit ? g->st_transit : NAN;
  v[LS_ST_OOO] = g->st_ooo;
  v[LS_ST_DUP] = g->st_dup;
  for (int i = 0; i < LS_SEEN_N; i++) v[LS_SEEN + i] = g->seen[i];
  v[LS_JB_STARTED] = g->jb_started;
  v[LS_JB_PLAY_TS] = g->play_ts;
  v[LS_JB_TARGET] = g->target;
  v[LS_JB_CALM] = g->calm;
  v[LS_JB_CONCEAL_RUN] = g->conceal_run;
  v[LS_JB_PLAYED_ANY] = g->played_any;
  v[LS_JB_LATE] = g->late;
  v[LS_JB_STALLED] = g->stalled;
  v[LS_JB_CONCEALED] = g->concealed;
  v[LS_JB_DROPPED] = g->dropped;
  memcpy(samples, g->last, sizeof g->last);
  size_t at = LEG_FRAME;
  int n = 0;
  for (int i = 0; i < g->count; i++) {
    jentry_t *e = jat(g, i);
    if (at + (size_t)e->len > LS_SAMPLES) break;
    v[LS_JB_ENTRIES + 2 * n] = e->ts;
    v[LS_JB_ENTRIES + 2 * n + 1] = e->len;
    memcpy(samples + at, e->s, (size_t)e->len * sizeof *samples);
    at += (size_t)e->len;
    n++;
  }
  v[LS_JB_COUNT] = n;
  v[LS_EV_ACTIVE] = g->ev_active;
  v[LS_EV_TS] = g->ev_ts;
  v[LS_EV_EVENT] = g->ev_event;
  v[LS_EV_DURATION] = g->ev_duration;
  v[LS_EV_LAST_SEEN] = g->ev_last_seen;
  v[LS_EV_REPORTED_N] = g->nreported;
  for (int i = 0; i < g->nreported; i++) v[LS_EV_REPORTED + i] = g->reported[i];
  v[LS_EV_PEND_N] = g->npend;
  for (int k = 0; k < g->npend; k++) {
    v[LS_EV_PEND + 3 * k] = g->pend_event[k];
    v[LS_EV_PEND + 3 * k + 1] = g->pend_samples[k];
    v[LS_EV_PEND + 3 * k + 2] = g->pend_ts[k];
  }
}

/* ---- N-API */

static legs_t *need_legs(napi_env env) {
  legs_t *l = uring_legs(env);
  if (!l || !l->ready) rtp_throw(env, ENXIO, "legs: legsInit() first");
  return l && l->ready ? l : NULL;
}

static int typed(napi_env env, napi_value v, napi_typedarray_type want, size_t min, void **data) {
  napi_typedarray_type t;
  size_t len;
  napi_value ab;
  size_t off;
  int is = 0;
  napi_is_typedarray(env, v, (bool *)&is);
  if (!is || napi_get_typedarray_info(env, v, &t, &len, data, &ab, &off) != napi_ok || t != want || len < min) return 0;
  return 1;
}

/* legsInit(muDecode Int16Array(256), aDecode, muEncode Uint8Array(65536), aEncode, timeOrigin) → the events arena (Float64Array) */
static napi_value l_init(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  legs_t *l = uring_legs(env);
  if (!l) return rtp_throw(env, ENXIO, "legsInit: init() first");
  void *md, *ad, *me, *ae;
  if (argc < 5 || !typed(env, argv[0], napi_int16_array, 256, &md) || !typed(env, argv[1], napi_int16_array, 256, &ad) ||
      !typed(env, argv[2], napi_uint8_array, 65536, &me) || !typed(env, argv[3], napi_uint8_array, 65536, &ae))
    return rtp_throw(env, EINVAL, "legsInit: the G.711 tables");
  if (!l->mu_enc) l->mu_enc = malloc(65536);
  if (!l->a_enc) l->a_enc = malloc(65536);
  if (!l->mu_enc || !l->a_enc) return rtp_throw(env, ENOMEM, "legsInit");
  memcpy(l->mu_dec, md, sizeof l->mu_dec);
  memcpy(l->a_dec, ad, sizeof l->a_dec);
  memcpy(l->mu_enc, me, 65536);
  memcpy(l->a_enc, ae, 65536);
  napi_get_value_double(env, argv[4], &l->time_origin);
  napi_value ab, ev;
  void *d;
  if (!l->ev) {
    napi_create_arraybuffer(env, (1 + (size_t)EV_SLOTS * EV_META) * sizeof(double), &d, &ab);
    l->ev = d;
    napi_create_typedarray(env, napi_float64_array, 1 + (size_t)EV_SLOTS * EV_META, ab, 0, &ev);
    napi_create_reference(env, ev, 1, &l->ev_ref);
  } else napi_get_reference_value(env, l->ev_ref, &ev);
  l->ready = 1;
  return ev;
}

/* attachLeg(fd, peerFd, state Float64Array(LS_SIZE), samples Int16Array(LS_SAMPLES)): the leg is served here from the next tick */
static napi_value l_attach(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  legs_t *l = need_legs(env);
  if (!l) return NULL;
  void *v, *s;
  if (argc < 4 || !typed(env, argv[2], napi_float64_array, LS_SIZE, &v) || !typed(env, argv[3], napi_int16_array, LS_SAMPLES, &s)) return rtp_throw(env, EINVAL, "attachLeg");
  int fd = rtp_arg_i32(env, argv[0]);
  if (fd < 0) return rtp_throw(env, EINVAL, "attachLeg: fd");
  if ((size_t)fd >= l->nfd) {
    size_t n = l->nfd ? l->nfd : 256;
    while (n <= (size_t)fd) n *= 2;
    leg_t **b = realloc(l->by_fd, n * sizeof *b);
    if (!b) return rtp_throw(env, ENOMEM, "attachLeg");
    memset(b + l->nfd, 0, (n - l->nfd) * sizeof *b);
    l->by_fd = b;
    l->nfd = n;
  }
  if (l->by_fd[fd]) return rtp_throw(env, EEXIST, "attachLeg: the leg is attached");
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 64;
    leg_t **list = realloc(l->list, (size_t)cap * sizeof *list);
    if (!list) return rtp_throw(env, ENOMEM, "attachLeg");
    l->list = list;
    l->cap = cap;
  }
  leg_t *g = calloc(1, sizeof *g);
  if (!g) return rtp_throw(env, ENOMEM, "attachLeg");
  g->fd = fd;
  g->peer_fd = rtp_arg_i32(env, argv[1]);
  for (int i = 0; i <= JB_CAP; i++) g->pool[i] = &g->ent[i];
  g->npool = JB_CAP + 1;
  g->pass = ((const double *)v)[LS_PASS] != 0;
  if (g->pass) {
    g->fw = calloc(1, sizeof *g->fw);
    if (!g->fw) {
      free(g);
      return rtp_throw(env, ENOMEM, "attachLeg");
    }
    /* the mapping JS had goes on (an RTCP report's round trip, a move with nothing sent between) */
    const double *sv = v;
    g->fw->anchor = sv[LS_PASS_MAPPED] == 0;
    g->fw->seq_delta = (uint16_t)(uint32_t)sv[LS_PASS_SEQ_DELTA];
    g->fw->ts_delta = (int32_t)sv[LS_PASS_TS_DELTA];
  }
  leg_import(g, v, s);
  l->by_fd[fd] = g;
  l->list[l->n++] = g;
  return NULL;
}

/* readLeg(fd, state, samples): the leg's state now (it stays here); detachLeg(...): and it leaves; false when not here */
static napi_value read_or_detach(napi_env env, napi_callback_info info, int detach) {
  size_t argc = 3;
  napi_value argv[3], out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  legs_t *l = need_legs(env);
  if (!l) return NULL;
  void *v, *s;
  if (argc < 3 || !typed(env, argv[1], napi_float64_array, LS_SIZE, &v) || !typed(env, argv[2], napi_int16_array, LS_SAMPLES, &s)) return rtp_throw(env, EINVAL, "readLeg");
  leg_t *g = leg_of(l, rtp_arg_i32(env, argv[0]));
  if (g) {
    leg_export(g, v, s);
    if (detach) remove_leg(l, g);
  }
  napi_get_boolean(env, g != NULL, &out);
  return out;
}

/* legSource(fd, out Float64Array(3)): [latched, remote IPv4 as int32, remote port] of the leg, false when not here: what
   JS checks RTCP against (strict RTP, rtp-source.ts admitRtcp) without a copy of the whole state per packet */
static napi_value l_source(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  legs_t *l = need_legs(env);
  if (!l) return NULL;
  void *v;
  if (argc < 2 || !typed(env, argv[1], napi_float64_array, 3, &v)) return rtp_throw(env, EINVAL, "legSource");
  leg_t *g = leg_of(l, rtp_arg_i32(env, argv[0]));
  if (g) {
    double *d = v;
    d[0] = g->latched;
    d[1] = (int32_t)g->remote_ip;
    d[2] = g->remote_port;
  }
  napi_get_boolean(env, g != NULL, &out);
  return out;
}

static napi_value l_read(napi_env env, napi_callback_info info) { return read_or_detach(env, info, 0); }
static napi_value l_detach(napi_env env, napi_callback_info info) { return read_or_detach(env, info, 1); }

void legs_define(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    { "legsInit", NULL, l_init, NULL, NULL, NULL, napi_enumerable, NULL },
    { "attachLeg", NULL, l_attach, NULL, NULL, NULL, napi_enumerable, NULL },
    { "detachLeg", NULL, l_detach, NULL, NULL, NULL, napi_enumerable, NULL },
    { "readLeg", NULL, l_read, NULL, NULL, NULL, napi_enumerable, NULL },
    { "legSource", NULL, l_source, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
}

