/**
 * RTCP sender and receiver reports (RFC 3550 §6.4), BYE, and the VoIP metrics block of extended
 * reports (RFC 3611 §4.7), inside a compound packet.
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

/** RFC 3611 §4.7 VoIP metrics about one source, as the sender of the XR measured them (null: "unavailable"). */
export interface VoipMetrics {
  ssrc: number;
  /** packets lost in the network, 1/256 */
  lossRate: number;
  /** packets discarded by the jitter buffer (late, early), 1/256 */
  discardRate: number;
  roundTripDelayMs: number;
  endSystemDelayMs: number;
  rFactor: number | null;
  /** MOS ×10 in the block; here as a MOS (1.0-5.0) */
  mosLq: number | null;
  mosCq: number | null;
  jbNominalMs: number;
}

export type RtcpPacket =
  | { type: 'SR'; ssrc: number; sender: SenderInfo; reports: ReportBlock[] }
  | { type: 'RR'; ssrc: number; reports: ReportBlock[] }
  | { type: 'BYE'; ssrcs: number[] }
  | { type: 'XR'; ssrc: number; voip: VoipMetrics[] }
  | { type: 'other'; packetType: number };

const PT_SR = 200;
const PT_RR = 201;
const PT_BYE = 203;
const PT_XR = 207;
const XR_VOIP_METRICS = 7;
/** a VoIP metrics block: 4 header + 32 bytes */
const VOIP_BLOCK_BYTES = 36;

const unavailable127 = (v: number): number | null => (v === 127 ? null : v);

function readVoipMetrics(v: DataView, off: number): VoipMetrics {
  const mos = (x: number): number | null => (x === 127 || x < 10 || x > 50 ? null : x / 10);
  return {
    ssrc: v.getUint32(off + 4),
    lossRate: v.getUint8(off + 8),
    discardRate: v.getUint8(off + 9),
    roundTripDelayMs: v.getUint16(off + 16),
    endSystemDelayMs: v.getUint16(off + 18),
    rFactor: unavailable127(v.getUint8(off + 24)),
    mosLq: mos(v.getUint8(off + 26)),
    mosCq: mos(v.getUint8(off + 27)),
    jbNominalMs: v.getUint16(off + 30),
  };
}

/** The VoIP metrics blocks of an XR packet of `len` bytes at `off` (other block types skipped); null when a block overruns it. */
function readXr(v: DataView, off: number, len: number): VoipMetrics[] | null {
  const voip: VoipMetrics[] = [];
  let b = off + 8;
  while (b + 4 <= off + len) {
    const blockLen = (v.getUint16(b + 2) + 1) * 4;
    if (b + blockLen > off + len) return null;
    if (v.getUint8(b) === XR_VOIP_METRICS) {
      if (blockLen < VOIP_BLOCK_BYTES) return null;
      voip.push(readVoipMetrics(v, b));
    }
    b += blockLen;
  }
  return voip;
}

/** An XR packet with one VoIP metrics block (what a peer such as a phone sends; tests and tools). */
export function serializeVoipMetricsXr(ssrc: number, m: VoipMetrics): Buffer {
  const buf = Buffer.alloc(8 + VOIP_BLOCK_BYTES);
  buf[0] = 0x80;
  buf[1] = PT_XR;
  buf.writeUInt16BE(buf.length / 4 - 1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  const b = 8;
  buf[b] = XR_VOIP_METRICS;
  buf.writeUInt16BE(VOIP_BLOCK_BYTES / 4 - 1, b + 2);
  buf.writeUInt32BE(m.ssrc >>> 0, b + 4);
  buf[b + 8] = m.lossRate;
  buf[b + 9] = m.discardRate;
  buf.writeUInt16BE(m.roundTripDelayMs, b + 16);
  buf.writeUInt16BE(m.endSystemDelayMs, b + 18);
  buf[b + 24] = m.rFactor ?? 127;
  buf[b + 25] = 127;
  buf[b + 26] = m.mosLq === null ? 127 : Math.round(m.mosLq * 10);
  buf[b + 27] = m.mosCq === null ? 127 : Math.round(m.mosCq * 10);
  buf.writeUInt16BE(m.jbNominalMs, b + 30);
  return buf;
}

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
    } else if (pt === PT_XR) {
      if (len < 8) return null;
      const voip = readXr(v, off, len);
      if (!voip) return null;
      out.push({ type: 'XR', ssrc: v.getUint32(off + 4), voip });
    } else {
      out.push({ type: 'other', packetType: pt });
    }
    off += len;
  }
  return out.length ? out : null;
}

/** The middle 32 bits of an NTP timestamp (what LSR carries and RTT is computed in: 1/65536 s). */
export function ntpMiddle(t: { ntpSec: number; ntpFrac: number }): number {
  return (((t.ntpSec & 0xffff) << 16) | (t.ntpFrac >>> 16)) >>> 0;
}

/**
 * Round-trip time in ms from a report block about our stream that arrived at wall-clock `arrivalMs`
 * (RFC 3550 §6.4.1: arrival − LSR − DLSR); null when the block has no LSR or the result is not a
 * plausible time (negative, or over a minute: a stale or forged block).
 */
export function roundTripMs(block: Pick<ReportBlock, 'lsr' | 'dlsr'>, arrivalMs: number): number | null {
  if (!block.lsr) return null;
  const units = (ntpMiddle(ntpFromMs(arrivalMs)) - block.lsr - block.dlsr) | 0;
  if (units < 0 || units > 60 * 65536) return null;
  return (units * 1000) / 65536;
}

/** NTP timestamp (RFC 3550 §4) for a wall-clock time in ms. */
export function ntpFromMs(ms: number): { ntpSec: number; ntpFrac: number } {
  const NTP_EPOCH_OFFSET = 2208988800;
  const sec = Math.floor(ms / 1000);
  return { ntpSec: (sec + NTP_EPOCH_OFFSET) >>> 0, ntpFrac: Math.floor(((ms % 1000) / 1000) * 0x100000000) >>> 0 };
}
