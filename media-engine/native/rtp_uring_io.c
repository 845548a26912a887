/*
 * rtp_uring.node's packets (rtp_uring.c owns the ring): flush() sends a tick's queued packets, arms
 * again the receives that ended and collects what arrived on every socket in one io_uring_enter;
 * harvest() takes more completions without a system call. A packet of a leg served in C (rtp_legs.c)
 * goes to that leg, the rest to the rx arena JS reads.
 */
#define _GNU_SOURCE
#include "rtp_uring_int.h"
#include "rtp_common.h"
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <arpa/inet.h>

/*
 * How long before the flush's clock reading (u->real_now, taken with u->perf_now) the kernel received the
 * packet (SO_TIMESTAMPNS), ms; 0 when it gave no time. The same reading serves every harvest of the flush:
 * one read later (after JS dispatched the first RX_SLOTS packets) made those packets look that much older.
 * A packet stamped during the flush's own io_uring_enter is a little younger than the reading (negative).
 */
static double packet_age(uring_t *u, struct io_uring_recvmsg_out *o, struct msghdr *m) {
  struct timespec ts = { 0, 0 };
  for (struct cmsghdr *c = io_uring_recvmsg_cmsg_firsthdr(o, m); c; c = io_uring_recvmsg_cmsg_nexthdr(o, m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof ts)) memcpy(&ts, CMSG_DATA(c), sizeof ts);
  if (ts.tv_sec == 0) return 0;
  double age = u->real_now - ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
  return age < -100 || age > 60000 ? 0 : age; /* the clock was stepped */
}

static void legs_send(void *ring, int fd, struct msghdr *h);
static int legs_submit(void *ring);

static void give_back(uring_t *u, unsigned bid) {
  io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, (unsigned short)bid, NBUFS - 1, u->returned++);
}

/* the completions waiting, up to RX_SLOTS received packets into the rx arena; returns how many */
static int harvest(uring_t *u) {
  struct io_uring_cqe *cqe;
  int k = 0;
  unsigned seen = 0;
  while (k < RX_SLOTS && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    int fd = UD_FD(ud);
    int res = cqe->res;
    unsigned flags = cqe->flags;
    io_uring_cqe_seen(&u->ring, cqe);
    seen++;
    int live = fd >= 0 && (size_t)fd < u->nfd && u->open[fd] && u->gen[fd] == UD_GEN(ud);
    if (UD_KIND(ud) == K_SEND) {
      if (res < 0) u->counters[C_SEND_ERRORS]++;
      continue;
    }
    if (UD_KIND(ud) != K_RECV) continue;
    if (!(flags & IORING_CQE_F_MORE) && live) {
      if (res == -ENOBUFS) u->counters[C_NOBUFS]++;
      if (u->nrearm == u->caprearm) {
        size_t cap = u->caprearm ? u->caprearm * 2 : 64;
        int *n = realloc(u->rearm, cap * sizeof *n);
        if (n) {
          u->rearm = n;
          u->caprearm = cap;
        }
      }
      if (u->nrearm < u->caprearm) u->rearm[u->nrearm++] = fd;
    }
    if (!(flags & IORING_CQE_F_BUFFER)) continue;
    unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
    unsigned char *buf = u->bufs + (size_t)bid * BUF_SIZE;
    struct io_uring_recvmsg_out *o = res > 0 ? io_uring_recvmsg_validate(buf, res, &u->rmsg) : NULL;
    if (!live || !o || (o->flags & MSG_TRUNC) || o->namelen < sizeof(struct sockaddr_in)) {
      if (live) u->counters[C_DROPPED]++;
      give_back(u, bid);
      continue;
    }
    unsigned len = io_uring_recvmsg_payload_length(o, res, &u->rmsg);
    if (len > SLOT) {
      u->counters[C_DROPPED]++;
      give_back(u, bid);
      continue;
    }
    struct sockaddr_in *from = io_uring_recvmsg_name(o);
    const unsigned char *payload = io_uring_recvmsg_payload(o, &u->rmsg);
    double age = packet_age(u, o, &u->rmsg);
    if (legs_packet(u->legs, fd, payload, len, ntohl(from->sin_addr.s_addr), ntohs(from->sin_port), u->perf_now - age, legs_send, legs_submit, u)) {
      u->counters[C_RECEIVED]++;
      give_back(u, bid);
      continue;
    }
    memcpy(u->rx + (size_t)k * SLOT, payload, len);
    double *m = u->rx_meta + (size_t)k * RX_META;
    m[0] = fd;
    m[1] = len;
    m[2] = (double)(int32_t)ntohl(from->sin_addr.s_addr);
    m[3] = ntohs(from->sin_port);
    m[4] = age;
    give_back(u, bid);
    k++;
  }
  if (u->returned) {
    io_uring_buf_ring_advance(u->br, u->returned);
    u->returned = 0;
  }
  u->counters[C_RECEIVED] += k;
  (void)seen;
  return k;
}

/* one datagram to send on fd (an open socket of the ring) at the next submit; `h` must live until then */
static void queue_send(uring_t *u, int fd, struct msghdr *h) {
  struct io_uring_sqe *s = uring_sqe(u);
  if (!s) {
    u->counters[C_SEND_ERRORS]++;
    return;
  }
  io_uring_prep_sendmsg(s, fd, h, MSG_DONTWAIT);
  io_uring_sqe_set_data64(s, UD(K_SEND, u->gen[fd], fd));
  u->counters[C_SENT]++;
}

/* a C leg's packet (rtp_legs.c): its msghdr lives in the leg until the next submit */
static void legs_send(void *ring, int fd, struct msghdr *h) {
  uring_t *u = ring;
  if (fd >= 0 && (size_t)fd < u->nfd && u->open[fd]) queue_send(u, fd, h);
  else u->counters[C_SEND_ERRORS]++;
}

/* a C leg's forward buffers are all waiting: what is queued goes now (legs_submit_fn) */
static int legs_submit(void *ring) {
  uring_t *u = ring;
  int r;
  do r = io_uring_submit(&u->ring);
  while (r == -EINTR);
  u->counters[C_ENTERS]++;
  if (io_uring_sq_ready(&u->ring) != 0) {
    u->counters[C_SEND_ERRORS]++; /* the packet that wanted a buffer is not sent */
    return 0;
  }
  legs_submitted(u->legs);
  return 1;
}

legs_t *uring_legs(napi_env env) {
  uring_t *u = uring_of(env);
  return u ? u->legs : NULL;
}

/*
 * flush(nTx, perfNow, legsNow, skip): sends the nTx packets queued in the tx arena (txMeta: fd, ip, port, length per packet), arms
 * again the receives that ended, and collects what arrived: ONE io_uring_enter. Returns the number of
 * packets put in the rx arena (rxMeta: fd, length, ip, port, age ms); RX_SLOTS means harvest() for more.
 * A send that would block is dropped (MSG_DONTWAIT), as a full socket buffer drops it on the other paths.
 */
napi_value uring_js_flush(napi_env env, napi_callback_info info) {
  uring_t *u = uring_need(env);
  if (!u) return NULL;
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int n = argc ? rtp_arg_i32(env, argv[0]) : 0;
  if (n < 0 || n > TX_SLOTS) return rtp_throw(env, EINVAL, "flush");
  double legs_now = 0;
  if (argc >= 2) {
    napi_get_value_double(env, argv[1], &u->perf_now);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    u->real_now = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
  }
  if (argc >= 3) napi_get_value_double(env, argv[2], &legs_now);
  /* legsNow (the tick's time) > 0: the C legs are served first, their sends go out with the rest */
  if (legs_now > 0) legs_tick(u->legs, legs_now, argc >= 4 ? rtp_arg_i32(env, argv[3]) : 0, legs_send, u);
  for (int i = 0; i < n; i++) {
    const int32_t *m = u->tx_meta + (size_t)i * TX_META;
    int fd = m[0];
    int32_t len = m[3];
    if (fd < 0 || (size_t)fd >= u->nfd || !u->open[fd] || len < 0 || len > SLOT) {
      u->counters[C_SEND_ERRORS]++;
      continue;
    }
    struct sockaddr_in *to = &u->sto[i];
    memset(to, 0, sizeof *to);
    to->sin_family = AF_INET;
    to->sin_addr.s_addr = htonl((uint32_t)m[1]);
    to->sin_port = htons((uint16_t)m[2]);
    u->siov[i].iov_base = u->tx + (size_t)i * SLOT;
    u->siov[i].iov_len = (size_t)len;
    struct msghdr *h = &u->smsg[i];
    memset(h, 0, sizeof *h);
    h->msg_name = to;
    h->msg_namelen = sizeof *to;
    h->msg_iov = &u->siov[i];
    h->msg_iovlen = 1;
    queue_send(u, fd, h);
  }
  size_t nr = u->nrearm;
  u->nrearm = 0;
  for (size_t i = 0; i < nr; i++) {
    int fd = u->rearm[i];
    if (fd >= 0 && (size_t)fd < u->nfd && u->open[fd] && uring_arm(u, fd)) u->counters[C_REARMS]++;
  }
  /*
   * Submit, and run the receive work queued since the last flush. The kernel runs at most 20 deferred
   * task-work items per io_uring_enter unless more completions are asked for (IO_LOCAL_TW_DEFAULT_MAX),
   * one item per socket that got packets: so this asks for RUN_EVENTS completions with a zero timeout,
   * which runs up to that many items and returns at once (-ETIME when fewer came) instead of waiting.
   */
  struct __kernel_timespec zero = { 0, 0 };
  struct io_uring_cqe *first;
  int r;
  do r = io_uring_submit_and_wait_timeout(&u->ring, &first, RUN_EVENTS, &zero, NULL);
  while (r == -EINTR);
  /* the C legs' forward buffers are free once the kernel took every entry (a failed submit leaves them queued) */
  if (io_uring_sq_ready(&u->ring) == 0) legs_submitted(u->legs);
  u->counters[C_ENTERS]++;
  napi_value out;
  napi_create_int32(env, harvest(u), &out);
  return out;
}

/* unsubmitted(): sends queued since the last submit (C legs forwarding Opus as packets were handed over) */
napi_value uring_js_unsubmitted(napi_env env, napi_callback_info info) {
  (void)info;
  uring_t *u = uring_need(env);
  if (!u) return NULL;
  napi_value out;
  napi_create_uint32(env, io_uring_sq_ready(&u->ring), &out);
  return out;
}

/* harvest(): more received packets after a flush that filled the rx arena, without a system call */
napi_value uring_js_harvest(napi_env env, napi_callback_info info) {
  (void)info;
  uring_t *u = uring_need(env);
  if (!u) return NULL;
  napi_value out;
  napi_create_int32(env, harvest(u), &out);
  return out;
}
