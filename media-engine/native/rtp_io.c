/*
 * Polled UDP sockets for the media worker's RTP (media-engine/native/index.ts). The worker reads each
 * leg's socket in the leg's tick instead of libuv waking the event loop per packet; sends are one
 * sendto without Node's per-send objects. Each received packet carries the kernel's arrival time
 * (SO_TIMESTAMPNS), so jitter statistics do not depend on when the tick read it. IPv4 only, as the
 * worker's sockets are. Built at set-up with the C compiler against the machine's Node headers
 * (scripts/setup.sh); when it is missing the worker uses node:dgram.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include "rtp_common.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/*
 * The sockets each thread (napi_env) opened: a worker that dies or is stopped closes its sockets with it,
 * as libuv does for dgram, so its ports are free again. Instance data, finalised with the env.
 */
typedef struct {
  int *fds;
  size_t n, cap;
} open_fds;

static void fds_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  open_fds *o = data;
  for (size_t i = 0; i < o->n; i++) close(o->fds[i]);
  free(o->fds);
  free(o);
}

static open_fds *fds_of(napi_env env) {
  void *d = NULL;
  napi_get_instance_data(env, &d);
  return d;
}

static int fds_add(napi_env env, int fd) {
  open_fds *o = fds_of(env);
  if (!o) return 0;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 64;
    int *f = realloc(o->fds, cap * sizeof(int));
    if (!f) return 0;
    o->fds = f;
    o->cap = cap;
  }
  o->fds[o->n++] = fd;
  return 1;
}

/* true when fd was this env's (and is no longer listed) */
static int fds_remove(napi_env env, int fd) {
  open_fds *o = fds_of(env);
  if (!o) return 0;
  for (size_t i = 0; i < o->n; i++)
    if (o->fds[i] == fd) {
      o->fds[i] = o->fds[--o->n];
      return 1;
    }
  return 0;
}

/* the data and element count of a typed array of the wanted type; 0 when it is not one */
static int typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  napi_typedarray_type t;
  return napi_get_typedarray_info(env, v, &t, len, data, NULL, NULL) == napi_ok && t == want;
}

/* open(address: string, port: number, recvBuffer: number): fd; throws with .code (EADDRINUSE) */
static napi_value rtp_open(napi_env env, napi_callback_info info) {
  int fd = rtp_open_socket(env, info);
  if (fd < 0) return NULL;
  if (!fds_add(env, fd)) {
    close(fd);
    return rtp_throw(env, ENOMEM, "open");
  }
  napi_value out;
  napi_create_int32(env, fd, &out);
  return out;
}

static napi_value rtp_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = argc ? rtp_arg_i32(env, argv[0]) : -1;
  if (fds_remove(env, fd)) close(fd); /* only a socket this thread opened, once */
  return NULL;
}

/*
 * recv(fd, buf: Uint8Array, meta: Float64Array): the packet's length, or -1 when nothing is waiting.
 * meta[0] = source IPv4 as a signed 32-bit integer, meta[1] = source port, meta[2] = how long ago it arrived,
 * ms (the kernel's receive time against the clock now, both CLOCK_REALTIME, so a clock step between packets
 * does not matter; 0 when the kernel gave none). A datagram larger than `buf` is dropped, as is one
 * whose read failed (an ICMP error queued by an earlier send): the next one is read instead.
 */
static napi_value rtp_recv(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = rtp_arg_i32(env, argv[0]);
  size_t len = 0, mlen = 0;
  void *data = NULL, *mdata = NULL;
  napi_value out;
  if (!typed(env, argv[1], napi_uint8_array, &data, &len) || !typed(env, argv[2], napi_float64_array, &mdata, &mlen) || mlen < 3)
    return rtp_throw(env, EINVAL, "recv");
  struct sockaddr_in from;
  struct iovec iov = { data, len };
  union {
    char buf[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
  } control;
  struct msghdr m;
  ssize_t n = -1;
  /* bounded: errors and oversized datagrams are skipped, at most a few per call */
  for (int tries = 0; tries < 8; tries++) {
    memset(&m, 0, sizeof m);
    m.msg_name = &from;
    m.msg_namelen = sizeof from;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.buf;
    m.msg_controllen = sizeof control.buf;
    n = recvmsg(fd, &m, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 || (m.msg_flags & MSG_TRUNC) || m.msg_namelen < sizeof from) {
      n = -1;
      continue;
    }
    break;
  }
  if (n < 0) {
    napi_create_int32(env, -1, &out);
    return out;
  }
  double *meta = (double *)mdata;
  meta[0] = (double)(int32_t)ntohl(from.sin_addr.s_addr);
  meta[1] = (double)ntohs(from.sin_port);
  struct timespec ts = { 0, 0 };
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof ts)) memcpy(&ts, CMSG_DATA(c), sizeof ts);
  double age = 0;
  if (ts.tv_sec != 0) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    age = (double)(now.tv_sec - ts.tv_sec) * 1e3 + (double)(now.tv_nsec - ts.tv_nsec) / 1e6;
    if (age < 0 || age > 60000) age = 0; /* the clock was stepped back, or forward by a lot */
  }
  meta[2] = age;
  napi_create_int32(env, (int32_t)n, &out);
  return out;
}

/* send(fd, buf: Uint8Array, length, ip: int32, port): bytes sent, or -errno (a full buffer drops the packet) */
static napi_value rtp_send(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = rtp_arg_i32(env, argv[0]);
  size_t len = 0;
  void *data = NULL;
  if (argc < 5 || !typed(env, argv[1], napi_uint8_array, &data, &len)) return rtp_throw(env, EINVAL, "send");
  int32_t n = rtp_arg_i32(env, argv[2]);
  if (n < 0 || (size_t)n > len) return rtp_throw(env, EINVAL, "send");
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl((uint32_t)rtp_arg_i32(env, argv[3]));
  to.sin_port = htons((uint16_t)rtp_arg_i32(env, argv[4]));
  ssize_t r;
  do r = sendto(fd, data, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof to);
  while (r < 0 && errno == EINTR);
  napi_value out;
  napi_create_int32(env, r < 0 ? -errno : (int32_t)r, &out);
  return out;
}

/* localPort(fd): the port the socket is bound to (for port 0) */
static napi_value rtp_local_port(napi_env env, napi_callback_info info) {
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

NAPI_MODULE_INIT() {
  open_fds *o = calloc(1, sizeof *o);
  if (o) napi_set_instance_data(env, o, fds_finalize, NULL);
  napi_property_descriptor props[] = {
    { "open", NULL, rtp_open, NULL, NULL, NULL, napi_enumerable, NULL },
    { "close", NULL, rtp_close, NULL, NULL, NULL, napi_enumerable, NULL },
    { "recv", NULL, rtp_recv, NULL, NULL, NULL, napi_enumerable, NULL },
    { "send", NULL, rtp_send, NULL, NULL, NULL, napi_enumerable, NULL },
    { "localPort", NULL, rtp_local_port, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
