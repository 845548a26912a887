/**
 * The RTP capture of a call leg (issue 38, docs/observability.md "RTP in the pcap"): the RTP and RTCP
 * datagrams the media engine received and sent for one endpoint, as the engine saw them, in a compact
 * binary form shared by its writer (the engine's worker fills it, media-app stores it) and its reader
 * (control-api's pcap). One Redis string per call, `<prefix>rtpcap:<call id>`, set once when the leg's
 * media ends and expiring after the retention: bounded in size (the packets per leg) and time.
 * The record layout is the engine's (core/audio/capture-format.ts, written by media-engine/worker/rtp-capture.ts).
 */
import type { Redis } from 'ioredis';
import { parseRtpCapture, RECORD_HEADER, type CapturedDatagram } from '../audio/capture-format';

export { parseRtpCapture, type CapturedDatagram };

export const RTP_CAPTURE_MODES = ['off', 'headers', 'full'] as const;
export type RtpCaptureMode = (typeof RTP_CAPTURE_MODES)[number];

export interface RtpCaptureSettings {
  mode: RtpCaptureMode;
  /** datagrams kept per leg, both directions, RTP and RTCP together: the first ones of the call */
  maxPackets: number;
  /** seconds a capture is kept */
  retentionSec: number;
}

export const rtpCaptureKey = (prefix: string, callId: string): string => `${prefix}rtpcap:${callId}`;

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
