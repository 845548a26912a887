/**
 * The RTP capture of a call leg (issue 38, docs/observability.md "RTP in the pcap"): the RTP and RTCP
 * datagrams the media engine received and sent for one endpoint, as the engine saw them, in a compact
 * binary form shared by its writer (the engine's worker fills it, media-app stores it) and its reader
 * (control-api's pcap). One Redis string per call, `<prefix>rtpcap:<call id>`, set once when the leg's
 * media ends and expiring after the retention: bounded in size (the packets per leg) and time.
 *
 * Record layout (little-endian), RECORD_HEADER bytes then the captured bytes:
 *   0  f64  epoch ms of arrival (received) or of the send
 *   8  u32  source IPv4        12 u16 source port
 *  14  u32  destination IPv4   18 u16 destination port
 *  20  u16  the datagram's length on the wire (UDP payload)
 *  22  u16  bytes captured (less than the length when cut: headers-only mode, or over the snap length)
 */
import type { Redis } from 'ioredis';

export const RECORD_HEADER = 24;
/** Bytes kept of one datagram at most (a G.711 packet of 20 ms is 172; longer ones are cut, like tcpdump's snaplen). */
export const SNAP_BYTES = 200;
/** Bytes kept of an RTP packet in headers-only mode: the fixed RTP header (sequence, timestamp, SSRC, payload type). */
export const RTP_HEADER_BYTES = 12;

export const RTP_CAPTURE_MODES = ['off', 'headers', 'full'] as const;
export type RtpCaptureMode = (typeof RTP_CAPTURE_MODES)[number];

export interface RtpCaptureSettings {
  mode: RtpCaptureMode;
  /** datagrams kept per leg, both directions, RTP and RTCP together: the first ones of the call */
  maxPackets: number;
  /** seconds a capture is kept */
  retentionSec: number;
}

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

export const rtpCaptureKey = (prefix: string, callId: string): string => `${prefix}rtpcap:${callId}`;

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

/** Stores a leg's capture (nothing when it holds no packet). */
export async function storeRtpCapture(redis: Redis, prefix: string, callId: string, data: Uint8Array, retentionSec: number): Promise<void> {
  if (data.length < RECORD_HEADER) return;
  await redis.set(rtpCaptureKey(prefix, callId), Buffer.from(data.buffer, data.byteOffset, data.length), 'EX', retentionSec);
}

/** The captured datagrams of these calls (legs), oldest first. */
export async function readRtpCaptures(redis: Redis, prefix: string, callIds: string[]): Promise<CapturedDatagram[]> {
  if (!callIds.length) return [];
  const blobs = await redis.mgetBuffer(...callIds.map((id) => rtpCaptureKey(prefix, id)));
  const all = blobs.flatMap((b) => (b ? parseRtpCapture(b) : []));
  return all.sort((a, b) => a.us - b.us);
}
