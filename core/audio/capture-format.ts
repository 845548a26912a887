/**
 * The record layout of a leg's RTP capture (issue 38; written by media-engine/worker/rtp-capture.ts, stored and read
 * by the platform through core/media/rtp-capture.ts). Little-endian, RECORD_HEADER bytes then the
 * captured bytes:
 *   0  f64  epoch ms of arrival (received) or of the send
 *   8  u32  source IPv4        12 u16 source port
 *  14  u32  destination IPv4   18 u16 destination port
 *  20  u16  the datagram's length on the wire (UDP payload)
 *  22  u16  bytes captured (less than the length when cut: headers-only mode, or over the snap length)
 */
export const RECORD_HEADER = 24;
/** Bytes kept of an RTP packet at most (a G.711 packet of 20 ms is 172; longer ones are cut, like tcpdump's snaplen). */
export const SNAP_BYTES = 200;
/** Bytes kept of an RTCP packet at most: whole (a compound with SDES and RTCP-XR blocks often exceeds SNAP_BYTES). */
export const RTCP_SNAP_BYTES = 1500;
/** Bytes kept of an RTP packet in headers-only mode: the fixed RTP header (sequence, timestamp, SSRC, payload type). */
export const RTP_HEADER_BYTES = 12;

export interface CapturedDatagram {
  /** microseconds since the epoch */
  us: number;
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  /** the datagram's length on the wire */
  length: number;
  /** what was kept of it (possibly cut) */
  bytes: Buffer;
}

const ipText = (ip: number): string => `${(ip >>> 24) & 255}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;

/** The records of a capture; a record cut short (a truncated value) ends the list. */
export function parseRtpCapture(buf: Buffer): CapturedDatagram[] {
  const out: CapturedDatagram[] = [];
  let at = 0;
  while (at + RECORD_HEADER <= buf.length) {
    const cap = buf.readUInt16LE(at + 22);
    if (at + RECORD_HEADER + cap > buf.length) break;
    out.push({
      us: Math.round(buf.readDoubleLE(at) * 1000),
      srcIp: ipText(buf.readUInt32LE(at + 8)),
      srcPort: buf.readUInt16LE(at + 12),
      dstIp: ipText(buf.readUInt32LE(at + 14)),
      dstPort: buf.readUInt16LE(at + 18),
      length: buf.readUInt16LE(at + 20),
      bytes: buf.subarray(at + RECORD_HEADER, at + RECORD_HEADER + cap),
    });
    at += RECORD_HEADER + cap;
  }
  return out;
}
