/**
 * RTCP sender and receiver reports (RFC 3550 §6.4), plus BYE, inside a compound packet.
 */

export interface ReportBlock {
  ssrc: number;
  fractionLost: number; // 0..255
  cumulativeLost: number; // signed 24-bit
  highestSeq: number; // extended highest sequence number received
  jitter: number; // timestamp units
  lsr: number; // middle 32 bits of the last SR's NTP timestamp
  dlsr: number; // 1/65536 s
}

export interface SenderInfo {
  ntpSec: number;
  ntpFrac: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export type RtcpPacket =
  | { type: 'SR'; ssrc: number; sender: SenderInfo; reports: ReportBlock[] }
  | { type: 'RR'; ssrc: number; reports: ReportBlock[] }
  | { type: 'BYE'; ssrcs: number[] }
  | { type: 'other'; packetType: number };

const PT_SR = 200;
const PT_RR = 201;
const PT_BYE = 203;

function writeBlock(buf: Buffer, off: number, r: ReportBlock): void {
  buf.writeUInt32BE(r.ssrc >>> 0, off);
  buf[off + 4] = r.fractionLost & 0xff;
  const lost = Math.max(-0x800000, Math.min(0x7fffff, r.cumulativeLost)) & 0xffffff;
  buf.writeUIntBE(lost, off + 5, 3);
  buf.writeUInt32BE(r.highestSeq >>> 0, off + 8);
  buf.writeUInt32BE(r.jitter >>> 0, off + 12);
  buf.writeUInt32BE(r.lsr >>> 0, off + 16);
  buf.writeUInt32BE(r.dlsr >>> 0, off + 20);
}

function readBlock(v: DataView, off: number): ReportBlock {
  let lost = (v.getUint8(off + 5) << 16) | v.getUint16(off + 6);
  if (lost & 0x800000) lost -= 0x1000000;
  return {
    ssrc: v.getUint32(off),
    fractionLost: v.getUint8(off + 4),
    cumulativeLost: lost,
    highestSeq: v.getUint32(off + 8),
    jitter: v.getUint32(off + 12),
    lsr: v.getUint32(off + 16),
    dlsr: v.getUint32(off + 20),
  };
}

export function serializeSenderReport(ssrc: number, sender: SenderInfo, reports: ReportBlock[] = []): Buffer {
  if (reports.length > 31) throw new RangeError('at most 31 report blocks');
  const len = 28 + 24 * reports.length;
  const buf = Buffer.alloc(len);
  buf[0] = 0x80 | reports.length;
  buf[1] = PT_SR;
  buf.writeUInt16BE(len / 4 - 1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  buf.writeUInt32BE(sender.ntpSec >>> 0, 8);
  buf.writeUInt32BE(sender.ntpFrac >>> 0, 12);
  buf.writeUInt32BE(sender.rtpTimestamp >>> 0, 16);
  buf.writeUInt32BE(sender.packetCount >>> 0, 20);
  buf.writeUInt32BE(sender.octetCount >>> 0, 24);
  reports.forEach((r, i) => writeBlock(buf, 28 + 24 * i, r));
  return buf;
}

export function serializeReceiverReport(ssrc: number, reports: ReportBlock[]): Buffer {
  if (reports.length > 31) throw new RangeError('at most 31 report blocks');
  const len = 8 + 24 * reports.length;
  const buf = Buffer.alloc(len);
  buf[0] = 0x80 | reports.length;
  buf[1] = PT_RR;
  buf.writeUInt16BE(len / 4 - 1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  reports.forEach((r, i) => writeBlock(buf, 8 + 24 * i, r));
  return buf;
}

export function serializeBye(ssrcs: number[]): Buffer {
  const len = 4 + 4 * ssrcs.length;
  const buf = Buffer.alloc(len);
  buf[0] = 0x80 | ssrcs.length;
  buf[1] = PT_BYE;
  buf.writeUInt16BE(len / 4 - 1, 2);
  ssrcs.forEach((s, i) => buf.writeUInt32BE(s >>> 0, 4 + 4 * i));
  return buf;
}

/** Parses a compound RTCP packet; returns null when the framing is invalid. */
export function parseRtcp(buf: Uint8Array): RtcpPacket[] | null {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: RtcpPacket[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < 4) return null;
    const b0 = buf[off];
    if (b0 >> 6 !== 2) return null;
    const count = b0 & 0x1f;
    const pt = buf[off + 1];
    const len = (v.getUint16(off + 2) + 1) * 4;
    if (off + len > buf.length) return null;
    if (pt === PT_SR) {
      if (len < 28 + 24 * count) return null;
      const reports: ReportBlock[] = [];
      for (let i = 0; i < count; i++) reports.push(readBlock(v, off + 28 + 24 * i));
      out.push({
        type: 'SR',
        ssrc: v.getUint32(off + 4),
        sender: {
          ntpSec: v.getUint32(off + 8),
          ntpFrac: v.getUint32(off + 12),
          rtpTimestamp: v.getUint32(off + 16),
          packetCount: v.getUint32(off + 20),
          octetCount: v.getUint32(off + 24),
        },
        reports,
      });
    } else if (pt === PT_RR) {
      if (len < 8 + 24 * count) return null;
      const reports: ReportBlock[] = [];
      for (let i = 0; i < count; i++) reports.push(readBlock(v, off + 8 + 24 * i));
      out.push({ type: 'RR', ssrc: v.getUint32(off + 4), reports });
    } else if (pt === PT_BYE) {
      if (len < 4 + 4 * count) return null;
      const ssrcs: number[] = [];
      for (let i = 0; i < count; i++) ssrcs.push(v.getUint32(off + 4 + 4 * i));
      out.push({ type: 'BYE', ssrcs });
    } else {
      out.push({ type: 'other', packetType: pt });
    }
    off += len;
  }
  return out.length ? out : null;
}

/** NTP timestamp (RFC 3550 §4) for a wall-clock time in ms. */
export function ntpFromMs(ms: number): { ntpSec: number; ntpFrac: number } {
  const NTP_EPOCH_OFFSET = 2208988800;
  const sec = Math.floor(ms / 1000);
  return { ntpSec: (sec + NTP_EPOCH_OFFSET) >>> 0, ntpFrac: Math.floor(((ms % 1000) / 1000) * 0x100000000) >>> 0 };
}
