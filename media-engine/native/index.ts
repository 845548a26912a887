/**
 * The native RTP socket path (rtp_io.c), built at set-up by scripts/build-native.sh. `rtpIo` is null
 * when the build is not there (no C compiler or Node headers on the machine): the worker then uses
 * node:dgram, with the same behaviour and a higher cost per packet.
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
