/**
 * The Twilio Media Streams wire (encapsulation `twilio`): JSON text frames, audio as base64 G.711
 * µ-law at 8 kHz in 20 ms chunks (160 bytes). What the platform sends: `connected`, `start`, `media`,
 * `dtmf`, `mark`, `stop`; what a bidirectional stream's server may send: `media`, `mark`, `clear`.
 * As on Twilio, `sequenceNumber`, `chunk` and `timestamp` are decimal strings. Pure: no sockets here
 * (media-app/streams/twilio-stream.ts runs a stream; docs/media-streams.md, "Twilio").
 */
import { decodeG711, encodeG711Range, muLaw } from '../audio/g711';
import { LITTLE_ENDIAN, samplesToPcm16 } from '../audio/pcm16';

export const TWILIO_TRACKS = ['inbound_track', 'outbound_track', 'both_tracks'] as const;
export type TwilioTrack = (typeof TWILIO_TRACKS)[number];
/** A media message's track: what the caller says, or what the caller hears. */
export type TwilioMediaTrack = 'inbound' | 'outbound';

export const TWILIO_MEDIA_FORMAT = { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } as const;
/** Bytes of µ-law in one 20 ms chunk. */
export const TWILIO_CHUNK_BYTES = 160;

export function tracksOf(t: TwilioTrack): TwilioMediaTrack[] {
  return t === 'both_tracks' ? ['inbound', 'outbound'] : t === 'outbound_track' ? ['outbound'] : ['inbound'];
}

export interface TwilioStreamIds {
  streamSid: string;
  accountSid: string;
  callSid: string;
}

/** µ-law bytes of one 20 ms frame (or a few), reused: base64 is made from it at once. */
let scratch = Buffer.allocUnsafe(TWILIO_CHUNK_BYTES * 2);

/** Samples → base64 µ-law: a table lookup per sample into a reused buffer, then base64 (no other allocation). */
export function samplesToMulawBase64(samples: Int16Array): string {
  const n = samples.length;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(n);
  encodeG711Range('PCMU', samples, 0, n, scratch);
  return scratch.toString('base64', 0, n);
}

/** Samples or 16-bit little-endian PCM → µ-law in the reused scratch buffer; returns the byte count. */
function mulawIntoScratch(pcm: Int16Array | Buffer): number {
  if (pcm instanceof Int16Array || (LITTLE_ENDIAN && pcm.byteOffset % 2 === 0)) {
    const samples = pcm instanceof Int16Array ? pcm : new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
    if (samples.length > scratch.length) scratch = Buffer.allocUnsafe(samples.length);
    encodeG711Range('PCMU', samples, 0, samples.length, scratch);
    return samples.length;
  }
  const n = pcm.length >> 1;
  if (n > scratch.length) scratch = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) scratch[i] = muLaw.encodeSample(pcm.readInt16LE(i * 2));
  return n;
}

/** 16-bit little-endian PCM → base64 µ-law. */
export function pcmToMulawBase64(pcm: Buffer): string {
  const n = pcm.length >> 1;
  if (LITTLE_ENDIAN && pcm.byteOffset % 2 === 0) return samplesToMulawBase64(new Int16Array(pcm.buffer, pcm.byteOffset, n));
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = muLaw.encodeSample(pcm.readInt16LE(i * 2));
  return out.toString('base64');
}

/** base64 µ-law → 16-bit little-endian PCM (two bytes a sample). */
export function mulawBase64ToPcm(b64: string): Buffer {
  return samplesToPcm16(decodeG711('PCMU', Buffer.from(b64, 'base64')));
}

/** Builds the platform's messages of one stream, numbering them (`connected` carries no number). */
export class TwilioMessages {
  private seq = 0;
  private readonly chunks: Record<TwilioMediaTrack, number> = { inbound: 0, outbound: 0 };

  private readonly sidJson: string;
  /** the end of every `media` message of the stream, as bytes */
  private tail: Buffer | null = null;

  constructor(readonly ids: TwilioStreamIds) {
    this.sidJson = JSON.stringify(ids.streamSid);
  }

  private next(): string {
    return String(++this.seq);
  }

  connected(): string {
    return JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  }

  start(tracks: TwilioMediaTrack[], customParameters: Record<string, string>): string {
    const { streamSid, accountSid, callSid } = this.ids;
    return JSON.stringify({
      event: 'start',
      sequenceNumber: this.next(),
      start: { streamSid, accountSid, callSid, tracks, customParameters, mediaFormat: TWILIO_MEDIA_FORMAT },
      streamSid,
    });
  }

  /**
   * One chunk of a track (samples, or 16-bit little-endian PCM bytes); `timestampMs` counts from the
   * stream's start. Written as text directly (50 a second per stream): the same JSON as JSON.stringify
   * of { event, sequenceNumber, media: { track, chunk, timestamp, payload }, streamSid } would give,
   * every value being digits, base64, a track name or the stream's SID.
   */
  media(track: TwilioMediaTrack, timestampMs: number, pcm: Int16Array | Buffer): string {
    const chunk = ++this.chunks[track];
    const payload = pcm instanceof Int16Array ? samplesToMulawBase64(pcm) : pcmToMulawBase64(pcm);
    const ts = Math.max(0, Math.round(timestampMs));
    return `{"event":"media","sequenceNumber":"${++this.seq}","media":{"track":"${track}","chunk":"${chunk}","timestamp":"${ts}","payload":"${payload}"},"streamSid":${this.sidJson}}`;
  }

  /**
   * The same message as `media()`, as the bytes of its text (ASCII): written into one buffer, so that
   * a WebSocket client (which masks what it sends) frames and writes it as one piece, one write to the
   * socket, where a string is encoded to a new buffer and written as header and body (a writev).
   */
  mediaBytes(track: TwilioMediaTrack, timestampMs: number, pcm: Int16Array | Buffer): Buffer {
    const chunk = ++this.chunks[track];
    const mu = mulawIntoScratch(pcm);
    const head = `{"event":"media","sequenceNumber":"${++this.seq}","media":{"track":"${track}","chunk":"${chunk}","timestamp":"${Math.max(0, Math.round(timestampMs))}","payload":"`;
    const b64 = scratch.toString('base64', 0, mu);
    const tail = (this.tail ??= Buffer.from(`"},"streamSid":${this.sidJson}}`, 'latin1'));
    const out = Buffer.allocUnsafe(head.length + b64.length + tail.length);
    let o = out.write(head, 0, 'latin1');
    o += out.write(b64, o, 'latin1');
    tail.copy(out, o);
    return out;
  }

  dtmf(digit: string): string {
    return JSON.stringify({ event: 'dtmf', streamSid: this.ids.streamSid, sequenceNumber: this.next(), dtmf: { track: 'inbound_track', digit } });
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', sequenceNumber: this.next(), streamSid: this.ids.streamSid, mark: { name } });
  }

  stop(): string {
    const { streamSid, accountSid, callSid } = this.ids;
    return JSON.stringify({ event: 'stop', sequenceNumber: this.next(), streamSid, stop: { accountSid, callSid } });
  }
}

/** What a server's text frame asks for; `ignored` says why (logged, never fatal, as on Twilio). */
export type TwilioServerMessage = { kind: 'media'; pcm: Buffer } | { kind: 'mark'; name: string } | { kind: 'clear' } | { kind: 'ignored'; why: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Longest mark name kept (longer names are refused, not cut). */
export const MAX_MARK_NAME = 256;

function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** Reads one text frame from the customer's server; `streamSid` must be this stream's. */
export function parseServerMessage(text: string, streamSid: string): TwilioServerMessage {
  let m: Record<string, unknown> | null;
  try {
    m = record(JSON.parse(text));
  } catch {
    return { kind: 'ignored', why: 'not JSON' };
  }
  if (!m) return { kind: 'ignored', why: 'not a JSON object' };
  const event = m.event;
  if (event !== 'media' && event !== 'mark' && event !== 'clear') return { kind: 'ignored', why: `unknown event ${JSON.stringify(String(event).slice(0, 40))}` };
  if (m.streamSid !== streamSid) return { kind: 'ignored', why: `${event}: streamSid is not this stream's` };
  if (event === 'clear') return { kind: 'clear' };
  if (event === 'mark') {
    const name = record(m.mark)?.name;
    if (typeof name !== 'string' || !name || name.length > MAX_MARK_NAME) return { kind: 'ignored', why: `mark: mark.name must be a string of 1 to ${MAX_MARK_NAME} characters` };
    return { kind: 'mark', name };
  }
  const payload = record(m.media)?.payload;
  if (typeof payload !== 'string' || !BASE64.test(payload) || payload.length % 4 !== 0) return { kind: 'ignored', why: 'media: media.payload must be base64' };
  return { kind: 'media', pcm: mulawBase64ToPcm(payload) };
}
