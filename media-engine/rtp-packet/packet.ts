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

export function isRtcp(buf: Uint8Array, len = buf.length): boolean {
  // RFC 5761 §4: RTCP packet types 192..223 collide with no usable RTP payload types
  return len >= 8 && buf[0] >> 6 === 2 && buf[1] >= 192 && buf[1] <= 223;
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

/**
 * The fields of an RTP packet the receive path needs, read in place (payload = buf[payloadOffset..payloadEnd)).
 * `timestamp` and `ssrc` are the 32 bits read as a signed integer (`>>> 0` gives the unsigned value): a
 * small integer for V8, where an unsigned value above 2^31 is a heap number each time it is passed on.
 */
export interface RtpHeader {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  payloadOffset: number;
  payloadEnd: number;
}

export function newRtpHeader(): RtpHeader {
  return { marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, payloadOffset: 0, payloadEnd: 0 };
}

/**
 * parseRtp without allocating: fills `h` (one object per receiver, reused for every packet) and
 * returns false for anything parseRtp would refuse. The hot receive path of a media worker.
 */
export function readRtpHeader(buf: Uint8Array, h: RtpHeader, len = buf.length): boolean {
  if (len < 12) return false;
  const b0 = buf[0];
  if (b0 >> 6 !== 2) return false;
  let off = 12 + (b0 & 0x0f) * 4;
  if (len < off) return false;
  if ((b0 & 0x10) !== 0) {
    if (len < off + 4) return false;
    const end = off + 4 + ((buf[off + 2] << 8) | buf[off + 3]) * 4;
    if (len < end) return false;
    off = end;
  }
  let end = len;
  if ((b0 & 0x20) !== 0) {
    const pad = buf[len - 1];
    if (pad === 0 || end - pad < off) return false;
    end -= pad;
  }
  const b1 = buf[1];
  h.marker = (b1 & 0x80) !== 0;
  h.payloadType = b1 & 0x7f;
  h.sequenceNumber = (buf[2] << 8) | buf[3];
  h.timestamp = (buf[4] << 24) | (buf[5] << 16) | (buf[6] << 8) | buf[7];
  h.ssrc = (buf[8] << 24) | (buf[9] << 16) | (buf[10] << 8) | buf[11];
  h.payloadOffset = off;
  h.payloadEnd = end;
  return true;
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

/**
 * Writes a plain 12-byte header + the first `payloadLen` bytes of `payload` into a reusable buffer
 * (the hot path of the sender; allocates nothing). Returns the packet's length.
 */
export function writeRtpInto(buf: Buffer, marker: boolean, payloadType: number, seq: number, ts: number, ssrc: number, payload: Uint8Array, payloadLen = payload.length): number {
  writeRtpHeader(buf, marker, payloadType, seq, ts, ssrc);
  if (payloadLen === payload.length) buf.set(payload, 12);
  else for (let i = 0; i < payloadLen; i++) buf[12 + i] = payload[i];
  return 12 + payloadLen;
}

/** Writes a plain 12-byte header into `buf` (its payload already written at offset 12, e.g. encoded there). */
export function writeRtpHeader(buf: Uint8Array, marker: boolean, payloadType: number, seq: number, ts: number, ssrc: number): void {
  buf[0] = 0x80;
  buf[1] = (marker ? 0x80 : 0) | payloadType;
  buf[2] = (seq >> 8) & 0xff;
  buf[3] = seq & 0xff;
  buf[4] = (ts >>> 24) & 0xff;
  buf[5] = (ts >>> 16) & 0xff;
  buf[6] = (ts >>> 8) & 0xff;
  buf[7] = ts & 0xff;
  buf[8] = (ssrc >>> 24) & 0xff;
  buf[9] = (ssrc >>> 16) & 0xff;
  buf[10] = (ssrc >>> 8) & 0xff;
  buf[11] = ssrc & 0xff;
}

/** Signed distance a-b on the 16-bit sequence space. */
export function seqDiff(a: number, b: number): number {
  return ((a - b + 0x8000) & 0xffff) - 0x8000;
}

/** Signed distance a-b on the 32-bit timestamp space. */
export function tsDiff(a: number, b: number): number {
  return (a - b) | 0;
}
