/**
 * The 'uring' RTP socket kind: every socket of the worker thread sits on one io_uring (native/rtp_uring.c).
 * A send copies the packet into the ring's arena; `flush()` hands the kernel every queued send and takes
 * every packet that arrived on any socket, in one system call and one crossing from JS to C. The engine
 * flushes at the start of each tick (what arrived goes to the legs' jitter buffers before they are served)
 * and at its end (the tick's sends leave together). A send outside a tick is flushed on the next turn of
 * the event loop. Packets are handed over as on the other kinds, in a reused slot of the arena: a
 * handler must not keep the buffer.
 */
import { rtpUring, type NativeRtpUring, type UringArenas, type UringCounters } from '../native';
import type { PacketHandler, Peer, RtpTransport } from './rtp-transport';

const TX_META = 4;
/** each socket's receive buffer, as on the other kinds */
const RECV_BUFFER = 512 * 1024;
const RX_META = 5;

export class UringIo {
  private readonly txBytes: Uint8Array;
  private readonly txMeta: Int32Array;
  private readonly rxMeta: Float64Array;
  /** one Buffer per receive slot, made once: handing a packet over allocates no view */
  private readonly rxViews: Buffer[];
  private readonly byFd: (UringTransport | undefined)[] = [];
  private readonly slot: number;
  private readonly txSlots: number;
  private readonly rxSlots: number;
  private queued = 0;
  private ticking = false;
  /** handing over arrivals: a flush now would overwrite the receive arena being read */
  private dispatching = false;
  private scheduled = false;
  private failedOnce = false;
  private warnedFull = false;
  private unsent = 0;
  readonly mode: string;

  constructor(
    readonly io: NativeRtpUring,
    a: UringArenas,
  ) {
    this.slot = a.slot;
    this.txSlots = a.txSlots;
    this.rxSlots = a.rxSlots;
    this.txBytes = new Uint8Array(a.tx);
    this.txMeta = a.txMeta;
    this.rxMeta = a.rxMeta;
    this.rxViews = Array.from({ length: a.rxSlots }, (_, i) => Buffer.from(a.rx, i * a.slot, a.slot));
    this.mode = a.mode;
  }

  register(fd: number, t: UringTransport | undefined): void {
    this.byFd[fd] = t;
  }

  /** Whether `n` more packets (and an RTCP report) can be queued now: always, but while arrivals are handed over. */
  roomFor(n: number): boolean {
    return !this.dispatching || this.queued + n + 1 <= this.txSlots;
  }

  /** Queues one packet (sent at the next flush); a packet longer than a slot is not sent. */
  queue(fd: number, packet: Buffer, to: Peer): void {
    if (packet.length > this.slot) return;
    // a full queue goes out first (whose arrivals may queue more: again until there is room); not while
    // arrivals are handed over, which a flush would overwrite: senders then ask roomFor, so this is a bug
    while (this.queued >= this.txSlots) {
      if (this.dispatching) {
        this.unsent++;
        if (!this.warnedFull) process.emitWarning('media RTP: a packet queued on a full ring while its arrivals were handed over was not sent');
        this.warnedFull = true;
        return;
      }
      this.flush();
    }
    const i = this.queued++;
    this.txBytes.set(packet, i * this.slot);
    const m = i * TX_META;
    this.txMeta[m] = fd;
    this.txMeta[m + 1] = to.ip;
    this.txMeta[m + 2] = to.port;
    this.txMeta[m + 3] = packet.length;
    if (!this.ticking && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushLater);
    }
  }

  private readonly flushLater = (): void => {
    this.scheduled = false;
    if (!this.ticking) this.flush();
  };

  /** The engine's tick begins: what arrived is handed to the legs; sends (also those made on arrival) wait for `endTick`. */
  beginTick(): void {
    this.ticking = true;
    this.flush();
  }

  /** The tick's sends go out; `legsNow` > 0: the C legs (c-legs.ts) are served in the same call. */
  endTick(legsNow = 0, skip = 0): void {
    this.ticking = false;
    this.flush(legsNow, skip);
  }

  /** Sends what is queued and hands over what arrived: one system call. */
  flush(legsNow = 0, skip = 0): void {
    const q = this.queued;
    this.queued = 0;
    const now = performance.now();
    let n = this.io.flush(q, now, legsNow, skip);
    const meta = this.rxMeta;
    this.dispatching = true;
    try {
      for (;;) {
        for (let i = 0; i < n; i++) {
          const m = i * RX_META;
          const t = this.byFd[meta[m]];
          if (!t) continue;
          try {
            t.onPacket(this.rxViews[i], meta[m + 1], meta[m + 2] | 0, meta[m + 3], now - meta[m + 4]);
          } catch (e) {
            // one packet's handler failing must not lose the others' packets of this flush
            if (!this.failedOnce) process.emitWarning(`media RTP packet handler failed: ${(e as Error).stack ?? String(e)}`);
            this.failedOnce = true;
          }
        }
        if (n < this.rxSlots) break;
        n = this.io.harvest();
      }
    } finally {
      this.dispatching = false;
    }
    // packets C legs forwarded as this flush handed them over go out on the next turn, as JS's own sends
    // outside a tick do (a tick's own flush at its end takes them otherwise)
    if (!this.ticking && !this.scheduled && this.io.unsubmitted() > 0) {
      this.scheduled = true;
      setImmediate(this.flushLater);
    }
  }

  counters(): UringCounters {
    return { ...this.io.stats(), unsent: this.unsent };
  }
}

class UringTransport implements RtpTransport {
  private fd = -1;

  get ringFd(): number {
    return this.fd;
  }

  constructor(
    private readonly ring: UringIo,
    readonly onPacket: PacketHandler,
  ) {}

  async open(address: string, port: number): Promise<void> {
    this.fd = this.ring.io.open(address, port, RECV_BUFFER);
    this.ring.register(this.fd, this);
  }

  roomFor(n: number): boolean {
    return this.ring.roomFor(n);
  }

  send(packet: Buffer, to: Peer): void {
    if (this.fd >= 0) this.ring.queue(this.fd, packet, to);
  }

  /** Packets come with the engine's flushes: nothing to read per leg. */
  poll(): void {}

  async close(): Promise<void> {
    if (this.fd < 0) return;
    this.ring.register(this.fd, undefined);
    this.ring.io.close(this.fd);
    this.fd = -1;
  }
}

/** This thread's ring, once started; why the kernel refused it, once refused. */
let ring: UringIo | null = null;
let refusal: string | null = null;
export const DEFAULT_RING_ENTRIES = 1024;

/** Starts this thread's ring (once): null when it runs, else why not (the module is missing, or the kernel refused). */
export function startUring(entries = DEFAULT_RING_ENTRIES): string | null {
  if (ring) return null;
  if (refusal !== null) return refusal;
  if (!rtpUring) return (refusal = 'rtp_uring.node is not built (liburing-dev missing at set-up)');
  try {
    ring = new UringIo(rtpUring, rtpUring.init(entries));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    refusal = `${err.code ?? 'error'}: ${err.message}`;
  }
  return refusal;
}

export const uringRing = (): UringIo | null => ring;

/** A socket on this thread's ring (started with the default size if it was not yet); null when there is none. */
export function uringTransport(onPacket: PacketHandler): RtpTransport | null {
  if (!ring) startUring();
  return ring ? new UringTransport(ring, onPacket) : null;
}
