/**
 * RTP packets (RFC 3550 §5.1): fixed header, CSRC list, header extension, padding.
 * parseRtp never throws; it returns null for anything that is not a valid RTP packet.
 */

export interface RtpHeaderExtension {
  profile: number; // "defined by profile" 16 bits
  data: Uint8Array; // length is a multiple of 4
}

export interface RtpPacket {
  version: 2;
  padding: number; // count of padding bytes (0 = none)
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrcs: number[];
  extension?: RtpHeaderExtension;
  payload: Uint8Array;
}

export function isRtcp(buf: Uint8Array): boolean {
  // RFC 5761 §4: RTCP packet types 192..223 collide with no usable RTP payload types
  return buf.length >= 8 && (buf[0] >> 6) === 2 && buf[1] >= 192 && buf[1] <= 223;
}

export function parseRtp(buf: Uint8Array): RtpPacket | null {
  if (buf.length < 12) return null;
  const b0 = buf[0];
  if (b0 >> 6 !== 2) return null;
  const hasPadding = (b0 & 0x20) !== 0;
  const hasExt = (b0 & 0x10) !== 0;
  const cc = b0 & 0x0f;
  const b1 = buf[1];
  let off = 12 + cc * 4;
  if (buf.length < off) return null;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const csrcs: number[] = [];
  for (let i = 0; i < cc; i++) csrcs.push(view.getUint32(12 + i * 4));
  let extension: RtpHeaderExtension | undefined;
  if (hasExt) {
    if (buf.length < off + 4) return null;
    const profile = view.getUint16(off);
    const words = view.getUint16(off + 2);
    const end = off + 4 + words * 4;
    if (buf.length < end) return null;
    extension = { profile, data: buf.subarray(off + 4, end) };
    off = end;
  }
  let end = buf.length;
  let padding = 0;
  if (hasPadding) {
    padding = buf[buf.length - 1];
    if (padding === 0 || end - padding < off) return null;
    end -= padding;
  }
  return {
    version: 2,
    padding,
    marker: (b1 & 0x80) !== 0,
    payloadType: b1 & 0x7f,
    sequenceNumber: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    csrcs,
    extension,
    payload: buf.subarray(off, end),
  };
}

export interface RtpWrite {
  marker?: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrcs?: number[];
  extension?: RtpHeaderExtension;
  padding?: number;
  payload: Uint8Array;
}

export function serializeRtp(p: RtpWrite): Buffer {
  const cc = p.csrcs?.length ?? 0;
  if (cc > 15) throw new RangeError('at most 15 CSRCs');
  if (p.payloadType < 0 || p.payloadType > 127) throw new RangeError('payload type out of range');
  const extLen = p.extension ? 4 + p.extension.data.length : 0;
  if (p.extension && p.extension.data.length % 4 !== 0) throw new RangeError('extension length must be a multiple of 4');
  const pad = p.padding ?? 0;
  if (pad < 0 || pad > 255) throw new RangeError('padding out of range');
  const len = 12 + cc * 4 + extLen + p.payload.length + pad;
  const buf = Buffer.allocUnsafe(len);
  buf[0] = 0x80 | (pad ? 0x20 : 0) | (p.extension ? 0x10 : 0) | cc;
  buf[1] = (p.marker ? 0x80 : 0) | p.payloadType;
  buf.writeUInt16BE(p.sequenceNumber & 0xffff, 2);
  buf.writeUInt32BE(p.timestamp >>> 0, 4);
  buf.writeUInt32BE(p.ssrc >>> 0, 8);
  let off = 12;
  for (let i = 0; i < cc; i++, off += 4) buf.writeUInt32BE(p.csrcs![i] >>> 0, off);
  if (p.extension) {
    buf.writeUInt16BE(p.extension.profile, off);
    buf.writeUInt16BE(p.extension.data.length / 4, off + 2);
    buf.set(p.extension.data, off + 4);
    off += extLen;
  }
  buf.set(p.payload, off);
  off += p.payload.length;
  if (pad) {
    buf.fill(0, off, off + pad - 1);
    buf[off + pad - 1] = pad;
  }
  return buf;
}

/** Writes a plain 12-byte header + payload into a reusable buffer (the hot path of the sender). */
export function writeRtpInto(
  buf: Buffer,
  marker: boolean,
  payloadType: number,
  seq: number,
  ts: number,
  ssrc: number,
  payload: Uint8Array,
): number {
  buf[0] = 0x80;
  buf[1] = (marker ? 0x80 : 0) | payloadType;
  buf.writeUInt16BE(seq & 0xffff, 2);
  buf.writeUInt32BE(ts >>> 0, 4);
  buf.writeUInt32BE(ssrc >>> 0, 8);
  buf.set(payload, 12);
  return 12 + payload.length;
}

/** Signed distance a-b on the 16-bit sequence space. */
export function seqDiff(a: number, b: number): number {
  return ((a - b + 0x8000) & 0xffff) - 0x8000;
}

/** Signed distance a-b on the 32-bit timestamp space. */
export function tsDiff(a: number, b: number): number {
  return (a - b) | 0;
}
