/**
 * A leg's RTP capture inside the worker (issue 38; record layout in ../rtp-packet/capture-format.ts): the
 * first `maxPackets` datagrams received and sent (RTP and RTCP), written into one buffer allocated
 * when the capture starts, so recording a packet allocates nothing. A leg without a capture has none
 * of this: its session checks one field per packet.
 */
import { RECORD_HEADER, RTCP_SNAP_BYTES, RTP_HEADER_BYTES, SNAP_BYTES } from '../rtp-packet/capture-format';
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
  /** epoch ms of the packets being sent now: the session sets it each tick (a field, so no number is boxed per packet) */
  sendTime = 0;
  private packets = 0;

  constructor(private readonly opts: RtpCaptureOptions) {
    this.buf = Buffer.alloc(opts.maxPackets * (RECORD_HEADER + SNAP_BYTES));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
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
    // the epoch time computed here, not by the caller: a double passed in would be a heap number per packet
    const v = this.view;
    v.setFloat64(at, mono < 0 ? this.sendTime : TIME_ORIGIN + mono, true);
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
    return Uint8Array.prototype.slice.call(this.buf, 0, this.at);
  }
}
