/**
 * A leg's RTP capture inside the worker (issue 38; record layout in ../rtp-packet/capture-format.ts): the
 * first `maxPackets` datagrams received and sent (RTP and RTCP), written into one buffer allocated
 * when the capture starts, so recording a packet allocates nothing. A leg without a capture has none
 * of this: its session checks one field per packet.
 */
import { RECORD_HEADER, RTCP_SNAP_BYTES, RTP_HEADER_BYTES, SNAP_BYTES } from '../../core/audio/capture-format';
import { TIME_ORIGIN } from './rtp-transport';

export interface RtpCaptureOptions {
  maxPackets: number;
  /** keep only the RTP header of RTP packets (RTCP is kept: reports carry no audio) */
  headersOnly: boolean;
}

export class RtpCapture {
  private readonly buf: Buffer;
  /** the same bytes: DataView's setters are inlined, Buffer's writeDoubleLE would box its double per call */
  private readonly view: DataView;
  private at = 0;
  /** epoch ms of the packets being sent now, as the 8 bytes records carry (copied per packet: no number is boxed) */
  private readonly sendTimeBytes = new Uint8Array(8);
  private readonly sendTimeView = new DataView(this.sendTimeBytes.buffer);
  private packets = 0;
  /** per record: 1 when its time is an arrival on the transport's clock (turned into epoch ms by take()) */
  private readonly arrivals: Uint8Array;

  /** The time of the packets sent from now on (epoch ms); the session sets it each tick. */
  set sendTime(ms: number) {
    this.sendTimeView.setFloat64(0, ms, true);
  }

  constructor(private readonly opts: RtpCaptureOptions) {
    this.buf = Buffer.alloc(opts.maxPackets * (RECORD_HEADER + SNAP_BYTES));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    this.arrivals = new Uint8Array(opts.maxPackets);
  }

  /**
   * Records one datagram (RTP cut at the snap length or its header; RTCP kept whole): `mono` its arrival
   * on performance.now()'s clock (the transport's), or -1 for a send (at `sendTime`); ips are IPv4 as 32-bit integers.
   */
  add(mono: number, srcIp: number, srcPort: number, dstIp: number, dstPort: number, data: Buffer, len: number, rtcp: boolean): void {
    if (this.packets >= this.opts.maxPackets) return;
    const keep = Math.min(len, rtcp ? RTCP_SNAP_BYTES : this.opts.headersOnly ? RTP_HEADER_BYTES : SNAP_BYTES);
    const b = this.buf;
    const at = this.at;
    // RTCP may be longer than a slot: the buffer (maxPackets slots) can fill before the count does
    if (at + RECORD_HEADER + keep > b.length) {
      this.packets = this.opts.maxPackets;
      return;
    }
    // stored as given: a sum computed here would be a new heap number per packet wherever V8 has not
    // optimised this method yet; take() adds the clock's origin to the arrivals
    const v = this.view;
    if (mono < 0) {
      const t = this.sendTimeBytes;
      for (let k = 0; k < 8; k++) b[at + k] = t[k]!;
      this.arrivals[this.packets] = 0;
    } else {
      v.setFloat64(at, mono, true);
      this.arrivals[this.packets] = 1;
    }
    v.setInt32(at + 8, srcIp | 0, true);
    v.setUint16(at + 12, srcPort & 0xffff, true);
    v.setInt32(at + 14, dstIp | 0, true);
    v.setUint16(at + 18, dstPort & 0xffff, true);
    v.setUint16(at + 20, len & 0xffff, true);
    v.setUint16(at + 22, keep, true);
    // byte by byte: Buffer#copy of a part allocates a view per call (at most 200 bytes; RTCP is rare)
    const to = at + RECORD_HEADER;
    for (let k = 0; k < keep; k++) b[to + k] = data[k]!;
    this.at = at + RECORD_HEADER + keep;
    this.packets++;
  }

  /** A copy of what was captured (the records, back to back). */
  take(): Uint8Array {
    const out = Uint8Array.prototype.slice.call(this.buf, 0, this.at);
    const v = new DataView(out.buffer, out.byteOffset, out.length);
    for (let at = 0, i = 0; at + RECORD_HEADER <= out.length; at += RECORD_HEADER + v.getUint16(at + 22, true), i++) {
      if (this.arrivals[i] === 1) v.setFloat64(at, TIME_ORIGIN + v.getFloat64(at, true), true);
    }
    return out;
  }
}
