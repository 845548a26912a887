/*
 * The media worker's RTP sockets behind one io_uring per worker thread (media-engine/worker/rtp-uring.ts):
 * every socket has one multishot recvmsg armed on a ring of provided buffers, and a tick's sends are
 * queued in a shared arena; flush() submits them all and collects every packet that arrived, on every
 * socket, in ONE system call (io_uring_enter), where the per-socket path (rtp_io.c) makes about three
 * per leg and 20 ms (recvmsg, recvmsg → EAGAIN, sendto) and crosses from JS to C for each.
 * Each received packet carries the kernel's arrival time (SO_TIMESTAMPNS), as in rtp_io.c. IPv4 only.
 * The ring runs with DEFER_TASKRUN + SINGLE_ISSUER (kernel 6.1+), so receive completions are made only
 * inside our io_uring_enter, not by interrupting the thread; on an older kernel it runs without them.
 * When the kernel refuses io_uring (disabled, seccomp, too old), init() throws and the worker uses rtp_io.c.
 * This file owns the ring (init, sockets, counters, the module); rtp_uring_io.c moves the packets.
 * Built by scripts/build-native.sh against Debian's liburing (liburing-dev).
 */
#define _GNU_SOURCE
#include "rtp_uring_int.h"
#include "rtp_common.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

static const char *counter_names[C_COUNT] = { "enters", "sent", "sendErrors", "received", "dropped", "rearms", "noBuffers" };

uring_t *uring_of(napi_env env) {
  void *d = NULL;
  napi_get_instance_data(env, &d);
  return d;
}

static void uring_free(uring_t *u) {
  if (u->ring_ok) {
    /* the armed receives hold their sockets: cancel them here and now (the ring's own teardown does it
       later, in a kernel worker), so a dead worker's ports are free when its thread is gone */
    struct io_uring_sync_cancel_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.flags = IORING_ASYNC_CANCEL_ANY;
    reg.timeout.tv_sec = -1;
    reg.timeout.tv_nsec = -1;
    io_uring_register_sync_cancel(&u->ring, &reg);
    /* and reap their last completions: a request lets go of its socket when its completion is flushed */
    struct io_uring_cqe *cqe;
    for (int pass = 0; pass < 8; pass++) {
      io_uring_get_events(&u->ring);
      unsigned n = 0;
      while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
        io_uring_cqe_seen(&u->ring, cqe);
        n++;
      }
      if (!n) break;
    }
  }
  for (size_t fd = 0; fd < u->nfd; fd++)
    if (u->open[fd]) close((int)fd);
  legs_free(u->legs);
  if (u->ring_ok) io_uring_queue_exit(&u->ring);
  if (u->br) munmap(u->br, u->br_bytes);
  free(u->bufs);
  free(u->gen);
  free(u->open);
  free(u->rearm);
  free(u);
}

static void uring_finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  uring_t *u = data;
  for (int i = 0; i < 4; i++)
    if (u->refs[i]) napi_delete_reference(env, u->refs[i]);
  uring_free(u);
}

static int grow_fd(uring_t *u, int fd) {
  if ((size_t)fd < u->nfd) return 1;
  size_t n = u->nfd ? u->nfd : 256;
  while (n <= (size_t)fd) n *= 2;
  uint32_t *g = realloc(u->gen, n * sizeof *g);
  if (!g) return 0;
  u->gen = g;
  uint8_t *o = realloc(u->open, n);
  if (!o) return 0;
  u->open = o;
  memset(u->gen + u->nfd, 0, (n - u->nfd) * sizeof *g);
  memset(u->open + u->nfd, 0, n - u->nfd);
  u->nfd = n;
  return 1;
}

struct io_uring_sqe *uring_sqe(uring_t *u) {
  struct io_uring_sqe *s = io_uring_get_sqe(&u->ring);
  if (!s) {
    io_uring_submit(&u->ring);
    u->counters[C_ENTERS]++;
    s = io_uring_get_sqe(&u->ring);
  }
  return s;
}

int uring_arm(uring_t *u, int fd) {
  struct io_uring_sqe *s = uring_sqe(u);
  if (!s) return 0;
  io_uring_prep_recvmsg_multishot(s, fd, &u->rmsg, 0);
  s->flags |= IOSQE_BUFFER_SELECT;
  s->buf_group = BGID;
  io_uring_sqe_set_data64(s, UD(K_RECV, u->gen[fd], fd));
  return 1;
}

/*
 * init(): this thread's ring. Returns { tx, txMeta, rx, rxMeta, slot, txSlots, rxSlots, flags } (the arenas
 * shared with JS); throws with the kernel's code (ENOSYS, EPERM, EINVAL, ENOMEM) when it refuses. Once per thread.
 * init(entries) asks for that submission queue size (the kernel refuses more than 32768 with EINVAL).
 */
static napi_value u_init(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (uring_of(env)) return rtp_throw(env, EEXIST, "io_uring init: this thread has a ring");
  int entries = argc >= 1 ? rtp_arg_i32(env, argv[0]) : 1024;
  if (entries <= 0) return rtp_throw(env, EINVAL, "io_uring init: entries");
  uring_t *u = calloc(1, sizeof *u);
  if (!u) return rtp_throw(env, ENOMEM, "io_uring init");
  struct io_uring_params p;
  unsigned tries[] = { IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_COOP_TASKRUN, 0 };
  int r = -EINVAL;
  unsigned used = 0;
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
    memset(&p, 0, sizeof p);
    p.flags = tries[i] | IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
    p.cq_entries = CQ_ENTRIES;
    r = io_uring_queue_init_params((unsigned)entries, &u->ring, &p);
    used = tries[i];
    if (r != -EINVAL || (unsigned)entries > 32768) break; /* EINVAL: retry with fewer flags (an older kernel) */
  }
  if (r < 0) {
    free(u);
    return rtp_throw(env, -r, "io_uring_setup");
  }
  u->ring_ok = 1;
  u->legs = legs_new();
  u->br_bytes = NBUFS * sizeof(struct io_uring_buf);
  void *br = mmap(NULL, u->br_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  u->bufs = malloc((size_t)NBUFS * BUF_SIZE);
  if (br == MAP_FAILED || !u->bufs) {
    if (br != MAP_FAILED) munmap(br, u->br_bytes);
    uring_free(u);
    return rtp_throw(env, ENOMEM, "io_uring buffers");
  }
  if (!u->legs) {
    uring_free(u);
    return rtp_throw(env, ENOMEM, "io_uring legs");
  }
  u->br = br;
  io_uring_buf_ring_init(u->br);
  struct io_uring_buf_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.ring_addr = (uint64_t)(uintptr_t)u->br;
  reg.ring_entries = NBUFS;
  reg.bgid = BGID;
  r = io_uring_register_buf_ring(&u->ring, &reg, 0);
  if (r < 0) { /* kernel < 5.19 */
    uring_free(u);
    return rtp_throw(env, -r, "io_uring_register_buf_ring");
  }
  for (int i = 0; i < NBUFS; i++) io_uring_buf_ring_add(u->br, u->bufs + (size_t)i * BUF_SIZE, BUF_SIZE, (unsigned short)i, NBUFS - 1, i);
  io_uring_buf_ring_advance(u->br, NBUFS);
  u->rmsg.msg_namelen = sizeof(struct sockaddr_in);
  u->rmsg.msg_controllen = CMSG_SPACE(sizeof(struct timespec));

  napi_value out, tx, txm, rx, rxm, ab, v;
  void *d;
  napi_create_object(env, &out);
  napi_create_arraybuffer(env, (size_t)TX_SLOTS * SLOT, &d, &tx);
  u->tx = d;
  napi_create_arraybuffer(env, (size_t)TX_SLOTS * TX_META * sizeof(int32_t), &d, &ab);
  u->tx_meta = d;
  napi_create_typedarray(env, napi_int32_array, (size_t)TX_SLOTS * TX_META, ab, 0, &txm);
  napi_create_arraybuffer(env, (size_t)RX_SLOTS * SLOT, &d, &rx);
  u->rx = d;
  napi_create_arraybuffer(env, (size_t)RX_SLOTS * RX_META * sizeof(double), &d, &ab);
  u->rx_meta = d;
  napi_create_typedarray(env, napi_float64_array, (size_t)RX_SLOTS * RX_META, ab, 0, &rxm);
  /* the arenas live as long as the ring: JS may drop its handles, C still writes into them */
  napi_create_reference(env, tx, 1, &u->refs[0]);
  napi_create_reference(env, txm, 1, &u->refs[1]);
  napi_create_reference(env, rx, 1, &u->refs[2]);
  napi_create_reference(env, rxm, 1, &u->refs[3]);
  napi_set_named_property(env, out, "tx", tx);
  napi_set_named_property(env, out, "txMeta", txm);
  napi_set_named_property(env, out, "rx", rx);
  napi_set_named_property(env, out, "rxMeta", rxm);
  napi_create_int32(env, SLOT, &v);
  napi_set_named_property(env, out, "slot", v);
  napi_create_int32(env, TX_SLOTS, &v);
  napi_set_named_property(env, out, "txSlots", v);
  napi_create_int32(env, RX_SLOTS, &v);
  napi_set_named_property(env, out, "rxSlots", v);
  napi_create_string_utf8(env, used & IORING_SETUP_DEFER_TASKRUN ? "defer-taskrun" : used ? "coop-taskrun" : "plain", NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, out, "mode", v);
  napi_set_instance_data(env, u, uring_finalize, NULL);
  return out;
}

uring_t *uring_need(napi_env env) {
  uring_t *u = uring_of(env);
  if (!u) rtp_throw(env, ENXIO, "io_uring: init() first");
  return u;
}

/* open(address, port, recvBuffer): fd, its receive armed (from the next flush); throws with .code (EADDRINUSE) */
static napi_value u_open(napi_env env, napi_callback_info info) {
  uring_t *u = uring_need(env);
  if (!u) return NULL;
  int fd = rtp_open_socket(env, info);
  if (fd < 0) return NULL;
  if (!grow_fd(u, fd)) {
    close(fd);
    return rtp_throw(env, ENOMEM, "open");
  }
  u->gen[fd]++;
  u->open[fd] = 1;
  if (!uring_arm(u, fd)) {
    u->open[fd] = 0;
    close(fd);
    return rtp_throw(env, EBUSY, "open: submission queue");
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

/* close(fd): its receive cancelled and the socket closed at once (the port is free when this returns) */
static napi_value u_close(napi_env env, napi_callback_info info) {
  uring_t *u = uring_of(env);
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = argc ? rtp_arg_i32(env, argv[0]) : -1;
  if (!u || fd < 0 || (size_t)fd >= u->nfd || !u->open[fd]) return NULL; /* only a socket of this ring, once */
  io_uring_submit(&u->ring); /* an SQE still queued for it must not reach a later socket of the same number */
  u->counters[C_ENTERS]++;
  struct io_uring_sync_cancel_reg reg;
  memset(&reg, 0, sizeof reg);
  reg.fd = fd;
  reg.flags = IORING_ASYNC_CANCEL_FD | IORING_ASYNC_CANCEL_ALL;
  reg.timeout.tv_sec = -1;
  reg.timeout.tv_nsec = -1;
  io_uring_register_sync_cancel(&u->ring, &reg); /* ENOENT: nothing armed any more */
  u->open[fd] = 0;
  u->gen[fd]++;
  legs_forget(u->legs, fd);
  close(fd);
  /* the cancelled receive lets go of the socket in deferred task work: run it now, so the port is free */
  io_uring_get_events(&u->ring);
  u->counters[C_ENTERS]++;
  return NULL;
}

/* localPort(fd): the port the socket is bound to */
static napi_value u_local_port(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  struct sockaddr_in a;
  socklen_t l = sizeof a;
  napi_value out;
  if (getsockname(rtp_arg_i32(env, argv[0]), (struct sockaddr *)&a, &l) < 0) return rtp_throw(env, errno, "getsockname");
  napi_create_int32(env, ntohs(a.sin_port), &out);
  return out;
}

/* stats(): the ring's counters since init (enters = io_uring_enter system calls) */
static napi_value u_stats(napi_env env, napi_callback_info info) {
  (void)info;
  uring_t *u = uring_of(env);
  napi_value out, v;
  napi_create_object(env, &out);
  for (int i = 0; i < C_COUNT; i++) {
    napi_create_double(env, u ? u->counters[i] : 0, &v);
    napi_set_named_property(env, out, counter_names[i], v);
  }
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    { "init", NULL, u_init, NULL, NULL, NULL, napi_enumerable, NULL },
    { "open", NULL, u_open, NULL, NULL, NULL, napi_enumerable, NULL },
    { "close", NULL, u_close, NULL, NULL, NULL, napi_enumerable, NULL },
    { "flush", NULL, uring_js_flush, NULL, NULL, NULL, napi_enumerable, NULL },
    { "harvest", NULL, uring_js_harvest, NULL, NULL, NULL, napi_enumerable, NULL },
    { "unsubmitted", NULL, uring_js_unsubmitted, NULL, NULL, NULL, napi_enumerable, NULL },
    { "localPort", NULL, u_local_port, NULL, NULL, NULL, napi_enumerable, NULL },
    { "stats", NULL, u_stats, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  legs_define(env, exports);
  return exports;
}
