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

/**
 * The sending side's mapping of its source's numbers onto its own stream (RtpSession.forwardFrom): deltas
 * anchored where our stream stood at the first packet, held while nothing else is sent on the stream and the
 * source does not restart. A C leg carries it (native/leg-layout.ts LS.PASS_*) between its moves.
 */
export class PassMapping {
  /** the source's epoch the mapping was made in */
  private epoch = -1;
  /** where our stream stood after the last forwarded packet; -1: anchored anew at the next packet */
  private nextSeq = -1;
  private nextTs = 0;
  seqDelta = 0;
  tsDelta = 0;

  /** Whether it goes on for a stream standing at `seq`/`ts` and a source at `epoch`. */
  holds(seq: number, ts: number, epoch: number): boolean {
    return this.nextSeq >= 0 && seq === this.nextSeq && ts === this.nextTs && epoch === this.epoch;
  }

  /** Keeps it when it holds, else starts anew at the next packet (frames we sent ourselves, a new source). */
  check(seq: number, ts: number, epoch: number): void {
    if (this.holds(seq, ts, epoch)) return;
    this.epoch = epoch;
    this.nextSeq = -1;
  }

  /** the last packet mapped: the numbers it goes out with */
  outSeq = 0;
  outTs = 0;

  /**
   * Maps the source's packet `seq`/`ts` (`ticks` long) for our stream standing at `streamSeq`/`streamTs` (anchored
   * there when the mapping starts): `outSeq`/`outTs`, and where our stream stands after it (`nextSeq`/`nextTs`).
   * A packet reordered before one already sent goes out with its own number; our stream does not step back.
   */
  map(streamSeq: number, streamTs: number, seq: number, ts: number, ticks: number): void {
    if (this.nextSeq < 0) {
      this.seqDelta = (streamSeq - seq) & 0xffff;
      this.tsDelta = (streamTs - ts) | 0;
    }
    this.outSeq = (seq + this.seqDelta) & 0xffff;
    this.outTs = (ts + this.tsDelta) | 0;
    const newer = ((this.outSeq - streamSeq) & 0xffff) < 0x8000;
    this.nextSeq = newer ? (this.outSeq + 1) & 0xffff : streamSeq;
    this.nextTs = newer ? (this.outTs + ticks) | 0 : streamTs;
  }

  /** where our stream stands after the last packet mapped */
  get streamSeq(): number {
    return this.nextSeq;
  }
  get streamTs(): number {
    return this.nextTs;
  }

  /** As C hands it back: `held` with these deltas from where our stream stands, for the source at `epoch`; else anew. */
  load(seq: number, ts: number, epoch: number, held: boolean, seqDelta: number, tsDelta: number): void {
    this.epoch = epoch;
    this.nextSeq = held ? seq : -1;
    this.nextTs = ts;
    this.seqDelta = seqDelta;
    this.tsDelta = tsDelta | 0;
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
