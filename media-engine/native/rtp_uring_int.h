/*
 * What the two halves of rtp_uring.node share: the ring of a worker thread (uring_t), its sizes and the
 * user-data tags of its requests. rtp_uring.c owns the ring (init, sockets, counters, the module);
 * rtp_uring_io.c moves the packets (flush, harvest). Private to those two files.
 */
#ifndef RTP_URING_INT_H
#define RTP_URING_INT_H
#include <node_api.h>
#include "rtp_legs.h"
#include <liburing.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define SLOT 1536      /* bytes per packet slot in the arenas shared with JS */
#define TX_SLOTS 512   /* packets queued per flush (JS flushes early when full) */
#define RX_SLOTS 512   /* packets handed to JS per flush/harvest (JS harvests again when full) */
#define TX_META 4      /* txMeta per packet: fd, ip (int32), port, length */
#define RX_META 5      /* rxMeta per packet: fd, length, ip (int32), port, age ms */
#define NBUFS 4096     /* provided receive buffers (a power of two) */
#define BUF_SIZE 2048  /* each: io_uring_recvmsg_out + address + control + payload */
#define BGID 1
#define CQ_ENTRIES 16384
#define RUN_EVENTS 8192 /* completions one flush lets the kernel make (receive work run) at most */

enum { K_RECV = 1, K_SEND = 2 };
#define UD(kind, gen, fd) (((uint64_t)(kind) << 62) | ((uint64_t)((gen) & 0x3fffffff) << 32) | (uint32_t)(fd))
#define UD_KIND(u) ((int)((u) >> 62))
#define UD_GEN(u) ((uint32_t)(((u) >> 32) & 0x3fffffff))
#define UD_FD(u) ((int)(uint32_t)(u))

typedef struct {
  struct io_uring ring;
  int ring_ok;
  struct io_uring_buf_ring *br;
  size_t br_bytes;
  unsigned char *bufs;
  int returned; /* buffers given back since the last advance */
  struct msghdr rmsg; /* the multishot recvmsg's template: address and control sizes */
  /* per fd: its generation (changes at open and close, so a completion of a closed socket whose number
     was reused is recognised) and whether it is open on this ring */
  uint32_t *gen;
  uint8_t *open;
  size_t nfd;
  int *rearm; /* sockets whose multishot receive ended (no buffer left, error): armed again at the next flush */
  size_t nrearm, caprearm;
  napi_ref refs[4];
  unsigned char *tx, *rx;
  int32_t *tx_meta;
  double *rx_meta;
  struct msghdr smsg[TX_SLOTS];
  struct iovec siov[TX_SLOTS];
  struct sockaddr_in sto[TX_SLOTS];
  double counters[8];
  legs_t *legs;   /* the plain G.711 legs served in C (rtp_legs.c) */
  double perf_now; /* the flush's performance.now(): a received packet arrived at perf_now - age */
  double real_now; /* CLOCK_REALTIME read with it (ms): age = real_now - the kernel's stamp, for every harvest of the flush */
} uring_t;

/* counters (stats()) */
enum { C_ENTERS, C_SENT, C_SEND_ERRORS, C_RECEIVED, C_DROPPED, C_REARMS, C_NOBUFS, C_COUNT };

/* the ring of the calling thread, or NULL before init() */
uring_t *uring_of(napi_env env);
/* the same, throwing (ENXIO) when there is none */
uring_t *uring_need(napi_env env);
/* an SQE, submitting what is queued first when the submission queue is full */
struct io_uring_sqe *uring_sqe(uring_t *u);
/* fd's multishot receive, queued; 0 when no SQE was free */
int uring_arm(uring_t *u, int fd);

napi_value uring_js_flush(napi_env env, napi_callback_info info);
napi_value uring_js_harvest(napi_env env, napi_callback_info info);
napi_value uring_js_unsubmitted(napi_env env, napi_callback_info info);
#endif
