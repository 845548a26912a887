/**
 * The UDP socket under an RTP session, in three kinds with one behaviour:
 *  - 'uring' (media-engine/native/rtp_uring.c, rtp-uring.ts): every socket of the worker on one io_uring;
 *    the engine's tick flushes them all in one system call (sends queued, arrivals handed over), each
 *    packet with the kernel's arrival time. When the kernel refuses io_uring, the worker says so once
 *    (a warning, and `rtpIoFallback` in its stats) and uses 'native'.
 *  - 'native' (media-engine/native/rtp_io.c): the socket is read in the leg's tick (`poll`), so the event loop is
 *    not woken per packet, and each packet comes with the kernel's arrival time; a send is one sendto.
 *  - 'dgram': node:dgram, packets delivered as events as they arrive; `poll` does nothing.
 * Packets are handed over as (buffer, length, source ip, source port, arrival on performance.now()'s
 * clock). The native kind reuses one buffer for every packet: a handler must not keep it.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import { ipLookup } from '../../core/net/ip-lookup';
import { rtpIo, rtpUring, type NativeRtpIo, type UringCounters } from '../native';
import { startUring, uringRing, uringTransport } from './rtp-uring';

export type RtpIoKind = 'uring' | 'native' | 'dgram';
export const RTP_IO_KINDS: readonly RtpIoKind[] = ['uring', 'native', 'dgram'];

/** Where packets go: the IPv4 address as text (dgram) and as a signed 32-bit integer (native). */
export interface Peer {
  address: string;
  ip: number;
  port: number;
}

export type PacketHandler = (buf: Buffer, len: number, fromIp: number, fromPort: number, arrival: number) => void;

export interface RtpTransport {
  open(address: string, port: number): Promise<void>;
  send(packet: Buffer, to: Peer): void;
  /** Whether `n` packets can be sent now (false only on the ring while it hands over arrivals with its queue nearly full). */
  roomFor(n: number): boolean;
  /** Hands over every packet waiting (native); nothing to do for dgram. */
  poll(): void;
  /** the socket on the worker's io_uring ('uring' only): what a C leg is attached by */
  readonly ringFd?: number;
  close(): Promise<void>;
}

const RECV_BUFFER = 512 * 1024;
/** performance.timeOrigin is a getter that allocates: read once */
export const TIME_ORIGIN = performance.timeOrigin;

/** An IPv4 literal as a signed 32-bit integer, or null. */
export function ipv4ToInt(address: string): number | null {
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return null;
      n = (n << 8) | part;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + (c - 48);
      digits++;
      if (part > 255) return null;
    } else return null;
  }
  if (dots !== 3 || digits === 0) return null;
  return (n << 8) | part;
}

export function intToIpv4(ip: number): string {
  return `${(ip >>> 24) & 255}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

/** A peer for address:port; `ip` is 0 for a host name until a native socket has resolved it. */
export function peer(address: string, port: number): Peer {
  return { address, ip: ipv4ToInt(address) ?? 0, port };
}

/** Peers whose host name is being looked up (one lookup at a time each). */
const resolving = new WeakSet<Peer>();
/** Peers whose last lookup failed: not asked again before this time (performance.now()). */
const failedUntil = new WeakMap<Peer, number>();
/** How long after a failed lookup the next one may start, ms: a name that never resolves is not a query per packet. */
export const RESOLVE_RETRY_MS = 1000;

/**
 * Looks up the host name `peers` share (IPv4) and fills in each one's `ip`: the signalled RTP and RTCP peers of an SDP
 * (rtp-session.ts asks when the SDP comes, and again at each send to a peer not resolved yet, so a failed lookup is
 * tried again, RESOLVE_RETRY_MS after it failed). One lookup at a time per first peer; an IP literal (0.0.0.0 among
 * them) is not looked up. A late answer for a name no longer signalled fills peers nothing sends to.
 */
export function resolvePeer(...peers: Peer[]): void {
  const first = peers[0];
  if (first === undefined || first.ip !== 0 || resolving.has(first) || net.isIP(first.address) !== 0) return;
  if (performance.now() < (failedUntil.get(first) ?? 0)) return;
  resolving.add(first);
  dns.lookup(first.address, { family: 4 }, (err, resolved) => {
    resolving.delete(first);
    const n = err ? null : ipv4ToInt(resolved);
    if (n === null) return void failedUntil.set(first, performance.now() + RESOLVE_RETRY_MS);
    for (const p of peers) if (p.ip === 0 && p.address === first.address) p.ip = n;
  });
}

/** The kind a worker uses when none is asked for: the fastest that was built. */
export const defaultRtpIo = (): RtpIoKind => (rtpUring ? 'uring' : rtpIo ? 'native' : 'dgram');

/** The socket kind of this thread's sessions (worker-main.ts sets it from the worker's options). */
let ioKind: RtpIoKind = 'dgram';
/** Why this thread asked for 'uring' and runs 'native' (the kernel refused io_uring), or null. */
let fallback: string | null = null;
/** Whether plain G.711 legs run in C on this thread's ring (c-legs.ts); only with 'uring'. */
let cLegs = true;
export function configureRtpIo(kind: RtpIoKind, opts: { ringEntries?: number; cLegs?: boolean } = {}): void {
  cLegs = opts.cLegs ?? true;
  if (kind === 'uring') {
    const refused = startUring(opts.ringEntries);
    if (refused === null) {
      ioKind = 'uring';
      return;
    }
    fallback = refused;
    process.emitWarning(`media worker: io_uring refused (${refused}); its RTP sockets use the per-socket native path`);
    kind = 'native';
  }
  ioKind = kind === 'native' && rtpIo ? 'native' : 'dgram';
}
/** The kind this thread's sessions really use (native only where the module loaded, uring only where the kernel took it). */
export const rtpIoKind = (): RtpIoKind => ioKind;
export const rtpIoFallback = (): string | null => fallback;
/** Whether this thread serves plain G.711 legs in C (asked for, and running 'uring'). */
export const cLegsEnabled = (): boolean => cLegs && ioKind === 'uring';
/** The ring's counters (system calls, packets) when this thread runs 'uring'. */
export const rtpRingCounters = (): UringCounters | null => (ioKind === 'uring' ? (uringRing()?.counters() ?? null) : null);

/** The engine's tick begins: a ring hands over what arrived on every socket (nothing to do for the other kinds). */
export function rtpIoTickStart(): void {
  uringRing()?.beginTick();
}
/** The engine's tick ends: a ring sends the tick's packets, all in one system call. */
export function rtpIoTickEnd(): void {
  uringRing()?.endTick();
}

/** A socket of this thread's kind. */
export function createTransport(onPacket: PacketHandler, kind: RtpIoKind = ioKind): RtpTransport {
  if (kind === 'uring') {
    const t = uringTransport(onPacket);
    if (t) return t;
  }
  return kind !== 'dgram' && rtpIo ? new NativeTransport(rtpIo, onPacket) : new DgramTransport(onPacket);
}

/** One receive buffer and metadata array for every native socket of the worker (packets are handled at once). */
const rxBuf = Buffer.allocUnsafeSlow(2048);
const rxMeta = new Float64Array(3);

class NativeTransport implements RtpTransport {
  private fd = -1;

  constructor(
    private readonly io: NativeRtpIo,
    private readonly onPacket: PacketHandler,
  ) {}

  async open(address: string, port: number): Promise<void> {
    this.fd = this.io.open(address, port, RECV_BUFFER);
  }

  roomFor(): boolean {
    return true;
  }

  send(packet: Buffer, to: Peer): void {
    if (this.fd < 0) return;
    this.io.send(this.fd, packet, packet.length, to.ip, to.port); // a full buffer or an ICMP error loses this packet only
  }

  poll(): void {
    // bounded: a flood on the port cannot hold the tick for ever (the rest waits for the next tick)
    for (let i = 0; i < 64 && this.fd >= 0; i++) {
      const n = this.io.recv(this.fd, rxBuf, rxMeta);
      if (n < 0) return;
      this.onPacket(rxBuf, n, rxMeta[0] | 0, rxMeta[1], performance.now() - rxMeta[2]);
    }
  }

  async close(): Promise<void> {
    if (this.fd >= 0) this.io.close(this.fd);
    this.fd = -1;
  }
}

class DgramTransport implements RtpTransport {
  private readonly sock = dgram.createSocket({ type: 'udp4', lookup: ipLookup as never });

  constructor(onPacket: PacketHandler) {
    this.sock.on('message', (msg, rinfo) => onPacket(msg, msg.length, ipv4ToInt(rinfo.address) ?? 0, rinfo.port, performance.now()));
    this.sock.on('error', () => {}); // errors after bind (ICMP unreachable etc.) must not kill the worker
  }

  open(address: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onErr = (e: Error) => reject(e);
      this.sock.once('error', onErr);
      this.sock.bind({ port, address, exclusive: true }, () => {
        this.sock.removeListener('error', onErr);
        try {
          this.sock.setRecvBufferSize(RECV_BUFFER);
        } catch {
          /* capped by net.core.rmem_max: keep the default */
        }
        resolve();
      });
    });
  }

  roomFor(): boolean {
    return true;
  }

  send(packet: Buffer, to: Peer): void {
    // (msg, port, address): no offset/length, so dgram sends the buffer as it is instead of slicing a new one
    this.sock.send(packet, to.port, to.address);
  }

  poll(): void {}

  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      try {
        this.sock.close(() => resolve());
      } catch {
        resolve(); // never bound or already closed
      }
    });
  }
}
