/**
 * G.722 (ITU-T G.722 at 64 kbit/s; RTP per RFC 3551: static payload type 9, an 8000 Hz RTP clock for
 * 16 kHz audio, so a 20 ms frame is 320 samples, 160 bytes and 160 timestamp ticks). Encoder, decoder
 * and concealment are libspandsp's, in the native module.
 */
import type { G722DecoderHandle, G722EncoderHandle, NativeCodecs } from '../native/codecs';
import { type Codec, type PayloadTypeRule, CodecError, checkInt, checkPayload, rangeError } from './codec';
import { requireNative } from './native-codec';

export const PT_G722 = 9;

export interface G722Options {
  /** Packet duration, ms: 10-60 in 10 ms steps (default 20). */
  ptime?: number;
}

export class G722Codec implements Codec {
  readonly name = 'G722';
  readonly clockRate = 8000;
  readonly sampleRate = 16000;
  readonly channels = 1;
  readonly rtpmapChannels = 1;
  readonly frameMs: number;
  readonly frameSamples: number;
  readonly frameTicks: number;
  readonly payloadType: PayloadTypeRule = { kind: 'static', pt: PT_G722 };
  readonly maxPayloadBytes: number;
  readonly hasFec = false;
  private readonly n: NativeCodecs;
  private readonly enc: G722EncoderHandle;
  private readonly dec: G722DecoderHandle;
  private open = true;

  constructor(opts: G722Options = {}) {
    const ptime = opts.ptime ?? 20;
    if (ptime % 10 !== 0) throw rangeError(`G.722 ptime must be 10-60 in 10 ms steps (got ${String(ptime)})`);
    this.frameMs = checkInt('G.722 ptime', ptime, 10, 60);
    this.frameSamples = this.frameMs * 16;
    this.frameTicks = this.frameMs * 8;
    this.maxPayloadBytes = this.frameMs * 8;
    this.n = requireNative('G.722');
    this.enc = this.n.g722EncoderCreate();
    this.dec = this.n.g722DecoderCreate();
  }

  get closed(): boolean {
    return !this.open;
  }

  private check(fn: string): void {
    if (!this.open) throw new CodecError('ERR_CODEC_CLOSED', `G722 ${fn}: the codec is closed`);
  }

  encode(pcm: Int16Array, out: Uint8Array): number {
    this.check('encode');
    if (pcm.length < this.frameSamples) throw rangeError(`G722 encode: pcm holds ${pcm.length} samples, a frame is ${this.frameSamples}`);
    return this.n.g722Encode(this.enc, pcm, this.frameSamples, out);
  }

  /** A frame of 8 kHz audio (frameMs × 8 samples): the lower band coded from it, the upper band empty. */
  encodeNarrow(pcm8k: Int16Array, out: Uint8Array): number {
    this.check('encodeNarrow');
    const n = this.frameMs * 8;
    if (pcm8k.length < n) throw rangeError(`G722 encodeNarrow: pcm holds ${pcm8k.length} samples, a frame at 8 kHz is ${n}`);
    return this.n.g722EncodeNarrow(this.enc, pcm8k, n, out);
  }

  decode(payload: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    this.check('decode');
    const off = offset ?? 0;
    const len = length ?? payload.length - off;
    checkPayload('G722 decode', payload, off, len);
    return this.n.g722Decode(this.dec, payload, off, len, out);
  }

  conceal(out: Int16Array): number {
    this.check('conceal');
    if (out.length < this.frameSamples) throw rangeError(`G722 conceal: out holds ${out.length} samples, a frame is ${this.frameSamples}`);
    return this.n.g722Conceal(this.dec, out, this.frameSamples);
  }

  recover(next: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    checkPayload('G722 recover', next, offset ?? 0, length ?? next.length - (offset ?? 0));
    return this.conceal(out);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.n.close(this.enc);
    this.n.close(this.dec);
  }
}
