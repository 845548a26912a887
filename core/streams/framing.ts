/**
 * The three encapsulations on the wire, one WebSocket binary message per 20 ms chunk:
 *  - rtp: RFC 3550 header (12 bytes, version 2, payload type 96, sequence +1 and timestamp +160 per
 *    chunk, a random SSRC) followed by the 320-byte PCM payload;
 *  - sln: the 320 bytes of PCM alone;
 *  - audiosocket: Asterisk AudioSocket messages (1-byte type, 2-byte big-endian length, payload):
 *    0x01 the stream's UUID first, then 0x10 slin audio; 0x00 is a hangup, 0xff an error, 0x03 DTMF.
 * Decoders accept what a client sends back in the same encapsulation.
 */
import { randomBytes } from 'node:crypto';
import type { Encapsulation } from './encapsulation';
import { FRAME_SAMPLES } from './encapsulation';

export const RTP_PAYLOAD_TYPE = 96;
export const RTP_HEADER_BYTES = 12;

export const AS_HANGUP = 0x00;
export const AS_UUID = 0x01;
export const AS_DTMF = 0x03;
export const AS_AUDIO = 0x10;
export const AS_ERROR = 0xff;

export type Inbound = { kind: 'audio'; pcm: Buffer } | { kind: 'hangup' } | { kind: 'uuid'; id: string } | { kind: 'dtmf'; digit: string } | { kind: 'error'; code: number };

export class StreamProtocolError extends Error {}

export interface Encoder {
  /** Messages sent once before the first chunk (AudioSocket's UUID). */
  opening(): Buffer[];
  /** One chunk of PCM (320 bytes) as one message. */
  frame(pcm: Buffer): Buffer;
  /** The message announcing the end, if the encapsulation has one. */
  hangup(): Buffer | null;
}

export interface Decoder {
  /** What one received message holds (AudioSocket may pack several messages, or split one). */
  push(msg: Buffer): Inbound[];
}

export function audioSocketMessage(type: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > 0xffff) throw new RangeError('AudioSocket payload too long');
  const b = Buffer.allocUnsafe(3 + payload.length);
  b[0] = type;
  b.writeUInt16BE(payload.length, 1);
  payload.copy(b, 3);
  return b;
}

export function uuidToBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${id}`);
  return Buffer.from(hex, 'hex');
}

export function bytesToUuid(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

class RtpEncoder implements Encoder {
  private seq = randomBytes(2).readUInt16BE(0);
  private ts = randomBytes(4).readUInt32BE(0);
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  opening(): Buffer[] {
    return [];
  }
  frame(pcm: Buffer): Buffer {
    const b = Buffer.allocUnsafe(RTP_HEADER_BYTES + pcm.length);
    b[0] = 0x80;
    b[1] = RTP_PAYLOAD_TYPE;
    b.writeUInt16BE(this.seq, 2);
    b.writeUInt32BE(this.ts >>> 0, 4);
    b.writeUInt32BE(this.ssrc, 8);
    pcm.copy(b, RTP_HEADER_BYTES);
    this.seq = (this.seq + 1) & 0xffff;
    this.ts = (this.ts + FRAME_SAMPLES) >>> 0;
    return b;
  }
  hangup(): null {
    return null;
  }
}

/** The payload of an RTP packet (CSRCs, header extension and padding skipped). */
export function rtpPayload(b: Buffer): Buffer {
  if (b.length < RTP_HEADER_BYTES || b[0]! >> 6 !== 2) throw new StreamProtocolError('not an RTP version 2 packet');
  let off = RTP_HEADER_BYTES + (b[0]! & 0x0f) * 4;
  if (b[0]! & 0x10) {
    if (b.length < off + 4) throw new StreamProtocolError('truncated RTP header extension');
    off += 4 + b.readUInt16BE(off + 2) * 4;
  }
  let end = b.length;
  if (b[0]! & 0x20) end -= b[b.length - 1]!;
  if (off > end) throw new StreamProtocolError('truncated RTP packet');
  return b.subarray(off, end);
}

class RtpDecoder implements Decoder {
  push(msg: Buffer): Inbound[] {
    return [{ kind: 'audio', pcm: rtpPayload(msg) }];
  }
}

class SlnCodec implements Encoder, Decoder {
  opening(): Buffer[] {
    return [];
  }
  frame(pcm: Buffer): Buffer {
    return pcm;
  }
  hangup(): null {
    return null;
  }
  push(msg: Buffer): Inbound[] {
    return [{ kind: 'audio', pcm: msg }];
  }
}

class AudioSocketEncoder implements Encoder {
  constructor(private readonly id: string) {}
  opening(): Buffer[] {
    return [audioSocketMessage(AS_UUID, uuidToBytes(this.id))];
  }
  frame(pcm: Buffer): Buffer {
    return audioSocketMessage(AS_AUDIO, pcm);
  }
  hangup(): Buffer {
    return audioSocketMessage(AS_HANGUP);
  }
}

export class AudioSocketDecoder implements Decoder {
  private pending: Buffer = Buffer.alloc(0);
  /** Bytes a peer may leave unfinished before we call it broken. */
  constructor(private readonly maxPending = 64 * 1024) {}
  push(msg: Buffer): Inbound[] {
    let b = this.pending.length ? Buffer.concat([this.pending, msg]) : msg;
    const out: Inbound[] = [];
    while (b.length >= 3) {
      const len = b.readUInt16BE(1);
      if (b.length < 3 + len) break;
      const type = b[0]!;
      const payload = b.subarray(3, 3 + len);
      b = b.subarray(3 + len);
      if (type === AS_AUDIO) out.push({ kind: 'audio', pcm: payload });
      else if (type === AS_HANGUP) out.push({ kind: 'hangup' });
      else if (type === AS_UUID) {
        if (len !== 16) throw new StreamProtocolError('AudioSocket UUID payload must be 16 bytes');
        out.push({ kind: 'uuid', id: bytesToUuid(payload) });
      } else if (type === AS_DTMF) out.push({ kind: 'dtmf', digit: payload.toString('latin1', 0, 1) });
      else if (type === AS_ERROR) out.push({ kind: 'error', code: len ? payload[0]! : 0 });
      else throw new StreamProtocolError(`unknown AudioSocket message type 0x${type.toString(16)}`);
    }
    this.pending = Buffer.from(b);
    if (this.pending.length > this.maxPending) throw new StreamProtocolError('AudioSocket message too long');
    return out;
  }
}

/** `streamId` is the UUID an AudioSocket peer receives first (the call or conference id). */
export function createEncoder(enc: Encapsulation, streamId: string): Encoder {
  if (enc === 'rtp') return new RtpEncoder();
  if (enc === 'audiosocket') return new AudioSocketEncoder(streamId);
  return new SlnCodec();
}

export function createDecoder(enc: Encapsulation): Decoder {
  if (enc === 'rtp') return new RtpDecoder();
  if (enc === 'audiosocket') return new AudioSocketDecoder();
  return new SlnCodec();
}
