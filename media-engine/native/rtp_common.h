/*
 * Shared by the two RTP socket modules (rtp_io.c: a system call per packet; rtp_uring.c: a worker's
 * sockets on one io_uring): the error they throw and how an RTP socket is opened. Header-only
 * (static inline functions), so each module stays one C file for scripts/build-native.sh.
 */
#ifndef OPENVOICE_RTP_COMMON_H
#define OPENVOICE_RTP_COMMON_H
#include <node_api.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Throws an Error "<what>: <strerror>" whose .code is the errno's name (EADDRINUSE, EMFILE...); returns NULL. */
static inline napi_value rtp_throw(napi_env env, int err, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, message, error;
  const char *name = strerrorname_np(err); /* glibc 2.32+ */
  if (!name) name = "EIO";
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &message);
  napi_create_error(env, code, message, &error);
  napi_set_named_property(env, error, "code", code);
  napi_throw(env, error);
  return NULL;
}

static inline int32_t rtp_arg_i32(napi_env env, napi_value v) {
  int32_t n = 0;
  napi_get_value_int32(env, v, &n);
  return n;
}

/*
 * The arguments of open(address: string, port: number, recvBuffer: number) → a bound non-blocking
 * UDP socket with receive timestamps, or -1 after throwing (EINVAL for bad arguments, the socket or
 * bind errno otherwise: EADDRINUSE for a taken port).
 */
static inline int rtp_open_socket(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char host[64];
  size_t hl = 0;
  if (argc < 3 || napi_get_value_string_utf8(env, argv[0], host, sizeof host, &hl) != napi_ok) {
    rtp_throw(env, EINVAL, "open");
    return -1;
  }
  int port = rtp_arg_i32(env, argv[1]);
  int rcvbuf = rtp_arg_i32(env, argv[2]);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  if (port < 0 || port > 65535 || inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    rtp_throw(env, EINVAL, "open");
    return -1;
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    rtp_throw(env, errno, "socket");
    return -1;
  }
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf); /* capped by rmem_max */
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    close(fd);
    rtp_throw(env, e, "bind");
    return -1;
  }
  return fd;
}
#endif
