/**
 * Opus↔Opus without transcoding: the packets one Opus leg received, waiting for its bridge peer to
 * send them on as they came (leg.ts decides when a pair may forward; rtp-session.ts queues and sends).
 * The payload is copied once into a slot made when the leg first forwards; the sender writes its own
 * SSRC, and sequence numbers and timestamps moved onto its own stream (gaps kept, so the far end sees
 * a loss as a loss). An Opus decoder takes any Opus packet (RFC 6716), whatever the other far end
 * chose to encode (bandwidth, bit rate, frame length): the fmtp parameters of RFC 7587 are wishes.
 */

/** Packets kept per leg: more than a tick's worth even when the far end sends 10 ms packets in bursts. */
const SLOTS = 16;
/** The longest payload forwarded (an RTP packet of it fits a session's send buffer). */
export const MAX_PASS_PAYLOAD = 1500;

export class PassQueue {
  private readonly bufs = Array.from({ length: SLOTS }, () => new Uint8Array(MAX_PASS_PAYLOAD));
  private readonly lens = new Int32Array(SLOTS);
  private readonly seqs = new Int32Array(SLOTS);
  private readonly tss = new Int32Array(SLOTS);
  private readonly markers = new Uint8Array(SLOTS);
  private head = 0;
  private count = 0;
  /** counts the source's restarts (a new SSRC): the sender then starts a new mapping */
  epoch = 0;

  /** packets waiting */
  get size(): number {
    return this.count;
  }

  /** Queues a packet's payload; the oldest is dropped when the queue is full (its peer is not sending). */
  push(msg: Uint8Array, from: number, to: number, seq: number, ts: number, marker: boolean): void {
    if (to - from > MAX_PASS_PAYLOAD) return;
    if (this.count === SLOTS) {
      this.head = (this.head + 1) % SLOTS;
      this.count--;
    }
    const i = (this.head + this.count) % SLOTS;
    const buf = this.bufs[i];
    for (let k = from; k < to; k++) buf[k - from] = msg[k]; // (a subarray view would be an allocation per packet)
    this.lens[i] = to - from;
    this.seqs[i] = seq;
    this.tss[i] = ts | 0;
    this.markers[i] = marker ? 1 : 0;
    this.count++;
  }

  /** Hands at most `max` queued packets to `send`, oldest first; returns how many it handed. */
  drain(max: number, send: (payload: Uint8Array, len: number, seq: number, ts: number, marker: boolean) => void): number {
    let k = 0;
    for (; k < max && this.count > 0; k++) {
      const i = this.head;
      this.head = (i + 1) % SLOTS;
      this.count--;
      send(this.bufs[i], this.lens[i], this.seqs[i], this.tss[i], this.markers[i] === 1);
    }
    return k;
  }

  /** The source restarted (a new SSRC): what is queued is dropped and the sender starts a new mapping. */
  restart(): void {
    this.clear();
    this.epoch++;
  }

  clear(): void {
    this.head = 0;
    this.count = 0;
  }
}

/** Frame length in 48 kHz samples by TOC configuration (RFC 6716 §3.1): SILK 10/20/40/60, hybrid 10/20, CELT 2.5/5/10/20 ms. */
const SILK = [480, 960, 1920, 2880];
const CELT = [120, 240, 480, 960];

/** An Opus packet's length on the 48 kHz RTP clock, from its TOC byte (and frame count byte); 0 when it has none. */
export function opusTicks(b: Uint8Array, off: number, len: number): number {
  if (len < 1) return 0;
  const toc = b[off];
  const config = toc >> 3;
  const size = config < 12 ? SILK[config & 3] : config < 16 ? (config & 1 ? 960 : 480) : CELT[config & 3];
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : len > 1 ? b[off + 1] & 0x3f : 0;
  return size * frames;
}
