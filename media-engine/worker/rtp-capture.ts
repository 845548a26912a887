/**
 * A leg's RTP capture inside the worker (issue 38; record layout in ../rtp-packet/capture-format.ts): the
 * first `maxPackets` datagrams received and sent (RTP and RTCP), written into one buffer allocated
 * when the capture starts, so recording a packet allocates nothing. A leg without a capture has none
 * of this: its session checks one field per packet.
 */
import { RECORD_HEADER, RTCP_SNAP_BYTES, RTP_HEADER_BYTES, SNAP_BYTES } from '../rtp-packet/capture-format';

export interface RtpCaptureOptions {
  maxPackets: number;
  /** keep only the RTP header of RTP packets (RTCP is kept: reports carry no audio) */
  headersOnly: boolean;
}

export class RtpCapture {
  private readonly buf: Buffer;
  private at = 0;
  private packets = 0;

  constructor(private readonly opts: RtpCaptureOptions) {
    this.buf = Buffer.alloc(opts.maxPackets * (RECORD_HEADER + SNAP_BYTES));
  }

  /** Records one datagram (RTP cut at the snap length or its header; RTCP kept whole); ips are IPv4 as 32-bit integers. */
  add(ms: number, srcIp: number, srcPort: number, dstIp: number, dstPort: number, data: Buffer, len: number, rtcp: boolean): void {
    if (this.packets >= this.opts.maxPackets) return;
    const keep = Math.min(len, rtcp ? RTCP_SNAP_BYTES : this.opts.headersOnly ? RTP_HEADER_BYTES : SNAP_BYTES);
    const b = this.buf;
    const at = this.at;
    // RTCP may be longer than a slot: the buffer (maxPackets slots) can fill before the count does
    if (at + RECORD_HEADER + keep > b.length) {
      this.packets = this.opts.maxPackets;
      return;
    }
    b.writeDoubleLE(ms, at);
    b.writeUInt32LE(srcIp >>> 0, at + 8);
    b.writeUInt16LE(srcPort & 0xffff, at + 12);
    b.writeUInt32LE(dstIp >>> 0, at + 14);
    b.writeUInt16LE(dstPort & 0xffff, at + 18);
    b.writeUInt16LE(len & 0xffff, at + 20);
    b.writeUInt16LE(keep, at + 22);
    data.copy(b, at + RECORD_HEADER, 0, keep);
    this.at = at + RECORD_HEADER + keep;
    this.packets++;
  }

  /** A copy of what was captured (the records, back to back). */
  take(): Uint8Array {
    return Uint8Array.prototype.slice.call(this.buf, 0, this.at);
  }
}
