/**
 * The native RTP socket paths, built at set-up by scripts/build-native.sh: rtp_io.c (a socket read and
 * written per leg) and rtp_uring.c (every socket of the worker behind one io_uring: one system call per
 * tick). `rtpIo` is null when its build is not there (no C compiler or Node headers on the machine): the
 * worker then uses node:dgram, with the same behaviour and a higher cost per packet; `rtpUring` is null
 * without liburing-dev (the worker then uses rtp_io.c).
 */
import path from 'node:path';

export interface NativeRtpIo {
  /** A non-blocking UDP socket bound to address:port (0: any free port); throws with `code` (EADDRINUSE). */
  open(address: string, port: number, recvBuffer: number): number;
  close(fd: number): void;
  /** One waiting packet into `buf`: its length, or -1. meta: [source IPv4 as int32, source port, how long ago it arrived in ms (0: the kernel gave no time)]. */
  recv(fd: number, buf: Uint8Array, meta: Float64Array): number;
  /** Bytes sent, or -errno. */
  send(fd: number, buf: Uint8Array, length: number, ip: number, port: number): number;
  localPort(fd: number): number;
}

export const NATIVE_RTP_IO_PATH = path.join(__dirname, 'build', 'rtp_io.node');

function load(): { io: NativeRtpIo | null; error: string | null } {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a native addon at a built path, loaded synchronously; its absence is caught
    return { io: require(NATIVE_RTP_IO_PATH) as NativeRtpIo, error: null };
  } catch (e) {
    return { io: null, error: (e as Error).message };
  }
}

const loaded = load();
export const rtpIo: NativeRtpIo | null = loaded.io;
/** Why the native path is not there (for the log), or null. */
export const rtpIoError: string | null = loaded.error;

/** The arenas a ring shares with JS (rtp_uring.c): packets queued for sending and packets received. */
export interface UringArenas {
  /** `txSlots` packets of `slot` bytes each */
  tx: ArrayBuffer;
  /** per queued packet: fd, IPv4 as int32, port, length */
  txMeta: Int32Array;
  /** `rxSlots` packets of `slot` bytes each */
  rx: ArrayBuffer;
  /** per received packet: fd, length, source IPv4 as int32, source port, how long ago it arrived (ms, 0: unknown) */
  rxMeta: Float64Array;
  slot: number;
  txSlots: number;
  rxSlots: number;
  /** how the kernel runs the ring: 'defer-taskrun' (completions made inside our system call only), 'coop-taskrun' or 'plain' */
  mode: string;
}

export interface UringCounters {
  /** io_uring_enter system calls */
  enters: number;
  sent: number;
  sendErrors: number;
  received: number;
  /** datagrams too large for a slot, or truncated */
  dropped: number;
  rearms: number;
  noBuffers: number;
  /** packets not sent: queued on a full ring while its arrivals were handed over (counted in JS, worker/rtp-uring.ts) */
  unsent: number;
}

export interface NativeRtpUring {
  /** This thread's ring (once per thread); throws with the kernel's `code` (ENOSYS, EPERM, EINVAL...) when it refuses io_uring. */
  init(entries: number): UringArenas;
  /** A UDP socket bound to address:port with a receive armed on the ring; throws with `code` (EADDRINUSE). */
  open(address: string, port: number, recvBuffer: number): number;
  /** Cancels the socket's receive and closes it: the port is free when it returns. */
  close(fd: number): void;
  /**
   * Sends the `n` packets queued in the tx arena and collects what arrived on every socket: one system call.
   * Returns the packets put in the rx arena. `perfNow`: performance.now() (a packet's arrival for the C legs);
   * `legsNow` > 0 (the tick's Date.now()): the C legs are served first (`skip`: frames skipped before), their
   * packets sent in the same call and their events left in legsInit's arena.
   */
  flush(n: number, perfNow?: number, legsNow?: number, skip?: number): number;
  /** Starts the C legs (rtp_legs.c) with the G.711 tables and performance.timeOrigin; returns the events arena. */
  legsInit(muDecode: Int16Array, aDecode: Int16Array, muEncode: Uint8Array, aEncode: Uint8Array, timeOrigin: number): Float64Array;
  /** Serves the leg of socket `fd` in C from the next flush, bridged to the leg of `peerFd`, from its state (native/leg-layout.ts). */
  attachLeg(fd: number, peerFd: number, state: Float64Array, samples: Int16Array): void;
  /** The leg's state now, into `state`/`samples`; detachLeg also takes it out of C. False when it is not in C. */
  readLeg(fd: number, state: Float64Array, samples: Int16Array): boolean;
  detachLeg(fd: number, state: Float64Array, samples: Int16Array): boolean;
  /** The leg's latched source into `out` (3 numbers: latched 0/1, IPv4 as int32, port): strict RTP's RTCP check, no state copy. False when not in C. */
  legSource(fd: number, out: Float64Array): boolean;
  /** More received packets after a flush that filled the rx arena (no system call). */
  harvest(): number;
  /** Sends queued in the ring since its last submit: C legs forwarding Opus packets as the flush handed them over. */
  unsubmitted(): number;
  localPort(fd: number): number;
  stats(): Omit<UringCounters, 'unsent'>;
}

export const NATIVE_RTP_URING_PATH = path.join(__dirname, 'build', 'rtp_uring.node');

function loadUring(): { io: NativeRtpUring | null; error: string | null } {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a native addon at a built path, loaded synchronously; its absence is caught
    return { io: require(NATIVE_RTP_URING_PATH) as NativeRtpUring, error: null };
  } catch (e) {
    return { io: null, error: (e as Error).message };
  }
}

const loadedUring = loadUring();
/** The io_uring socket path (rtp_uring.c, needs liburing-dev at build time); null when it was not built. */
export const rtpUring: NativeRtpUring | null = loadedUring.io;
export const rtpUringError: string | null = loadedUring.error;
