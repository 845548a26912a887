/**
 * Opus (RFC 6716 through libopus; RTP per RFC 7587: a dynamic payload type, rtpmap "opus/48000/2", the
 * RTP clock 48000 whatever the audio rate, so a 20 ms frame advances the timestamp by 960). Mono.
 * The engine encodes at 16 kHz (wideband legs) or 48 kHz and decodes to the same rate; a decoder takes
 * packets of any internal bandwidth (narrow, wide, super-wide, full band). Lost packets: recover() with
 * the next packet uses its in-band FEC (useinbandfec), conceal() uses Opus's own PLC.
 */
import type { NativeCodecs, OpusDecoderHandle, OpusEncoderHandle } from '../native/codecs';
import { type Codec, type PayloadTypeRule, CodecError, checkInt, checkPayload, rangeError } from './codec';
import { requireNative } from './native-codec';

/** The SDP-facing settings (RFC 7587 fmtp names in the comments). */
export interface OpusOptions {
  /** PCM rate in and out: 16000 (default) or 48000. */
  sampleRate?: 16000 | 48000;
  /** Encoder complexity 0-10 (default 5): CPU against quality. */
  complexity?: number;
  /** maxaveragebitrate, bit/s, 6000-510000 (default 24000 at 16 kHz, 32000 at 48 kHz). */
  maxAverageBitrate?: number;
  /** useinbandfec: put FEC data for the previous frame into each packet (default true). */
  useInbandFec?: boolean;
  /** The loss the FEC is sized for, % (default 10 with FEC; libopus adds no FEC at 0). */
  packetLossPercent?: number;
  /** usedtx: near-silent frames become 1-2 byte packets the sender may skip (default false). */
  useDtx?: boolean;
  /** ptime, ms: 10, 20 (default), 40 or 60. */
  ptime?: number;
  /**
   * maxplaybackrate, Hz, 8000-48000: the widest band the peer wants to receive; the encoder keeps
   * under it (8000: narrow band, 16000: wide band…). Default: the sampleRate.
   */
  maxPlaybackRate?: number;
}

/** 120 ms at 48 kHz: the longest Opus packet. */
export const OPUS_MAX_PACKET_SAMPLES_48K = 5760;

export class OpusCodec implements Codec {
  readonly name = 'opus';
  readonly clockRate = 48000;
  readonly sampleRate: 16000 | 48000;
  readonly channels = 1;
  readonly rtpmapChannels = 2;
  readonly frameMs: number;
  readonly frameSamples: number;
  readonly frameTicks: number;
  readonly payloadType: PayloadTypeRule = { kind: 'dynamic' };
  /** 1275 bytes: the largest single Opus frame (RFC 6716 3.2.1). */
  readonly maxPayloadBytes = 1275;
  readonly hasFec: boolean;
  readonly complexity: number;
  readonly maxAverageBitrate: number;
  readonly useDtx: boolean;
  readonly maxPlaybackRate: number;
  private readonly n: NativeCodecs;
  private readonly enc: OpusEncoderHandle;
  private readonly dec: OpusDecoderHandle;
  /** the encoder of frames of 8 kHz audio (encodeNarrow), made with the first */
  private enc8: OpusEncoderHandle | null = null;
  /** the last frame went through enc8: the other encoder resumes afresh (its history is of audio long gone) */
  private lastNarrow = false;
  private readonly loss: number;
  private open = true;

  constructor(opts: OpusOptions = {}) {
    const rate = opts.sampleRate ?? 16000;
    if (rate !== 16000 && rate !== 48000) throw rangeError(`Opus sampleRate must be 16000 or 48000 (got ${String(rate)})`);
    const ptime = opts.ptime ?? 20;
    if (![10, 20, 40, 60].includes(ptime)) throw rangeError(`Opus ptime must be 10, 20, 40 or 60 (got ${String(ptime)})`);
    this.sampleRate = rate;
    this.frameMs = ptime;
    this.frameSamples = (rate / 1000) * ptime;
    this.frameTicks = 48 * ptime;
    this.complexity = checkInt('Opus complexity', opts.complexity ?? 5, 0, 10);
    this.maxAverageBitrate = checkInt('Opus maxAverageBitrate', opts.maxAverageBitrate ?? (rate === 16000 ? 24000 : 32000), 6000, 510000);
    this.hasFec = opts.useInbandFec ?? true;
    const loss = (this.loss = checkInt('Opus packetLossPercent', opts.packetLossPercent ?? (this.hasFec ? 10 : 0), 0, 100));
    this.useDtx = opts.useDtx ?? false;
    this.maxPlaybackRate = checkInt('Opus maxPlaybackRate', opts.maxPlaybackRate ?? rate, 8000, 48000);
    this.n = requireNative('Opus');
    this.enc = this.n.opusEncoderCreate(rate, this.complexity, this.maxAverageBitrate, this.hasFec ? 1 : 0, loss, this.useDtx ? 1 : 0, this.maxPlaybackRate);
    try {
      this.dec = this.n.opusDecoderCreate(rate);
    } catch (e) {
      this.n.close(this.enc);
      throw e;
    }
  }

  get closed(): boolean {
    return !this.open;
  }

  private check(fn: string): void {
    if (!this.open) throw new CodecError('ERR_CODEC_CLOSED', `opus ${fn}: the codec is closed`);
  }

  /** Bytes written; 1-2 bytes with DTX on is a silence frame the sender need not send. */
  encode(pcm: Int16Array, out: Uint8Array): number {
    this.check('encode');
    if (pcm.length < this.frameSamples) throw rangeError(`opus encode: pcm holds ${pcm.length} samples, a frame is ${this.frameSamples}`);
    if (this.lastNarrow) {
      this.lastNarrow = false;
      this.n.opusEncoderReset(this.enc);
    }
    return this.n.opusEncode(this.enc, pcm, this.frameSamples, out);
  }

  /**
   * A frame of 8 kHz audio (frameMs × 8 samples) coded by an encoder at 8 kHz with the same settings
   * (narrow band from its first packet; no resampling). Its packets and the main encoder's form one stream
   * for any Opus decoder (RFC 6716: every packet says its own band and mode).
   */
  encodeNarrow(pcm8k: Int16Array, out: Uint8Array): number {
    this.check('encodeNarrow');
    const n = this.frameMs * 8;
    if (pcm8k.length < n) throw rangeError(`opus encodeNarrow: pcm holds ${pcm8k.length} samples, a frame at 8 kHz is ${n}`);
    if (this.enc8 === null) this.enc8 = this.n.opusEncoderCreate(8000, this.complexity, this.maxAverageBitrate, this.hasFec ? 1 : 0, this.loss, this.useDtx ? 1 : 0, 8000);
    else if (!this.lastNarrow) this.n.opusEncoderReset(this.enc8);
    this.lastNarrow = true;
    return this.n.opusEncode(this.enc8, pcm8k, n, out);
  }

  /** True: the frames carry 8 kHz audio, code narrow band (SILK at 8 kHz); false: the encoder's own choice. */
  narrowBand(on: boolean): void {
    this.check('narrowBand');
    this.n.opusEncoderNarrow(this.enc, on ? 1 : 0);
  }

  /** Samples written: the packet's own duration (a 60 ms packet needs an out of 60 ms). */
  decode(payload: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    this.check('decode');
    const off = offset ?? 0;
    const len = length ?? payload.length - off;
    checkPayload('opus decode', payload, off, len);
    const max = Math.min(out.length, (OPUS_MAX_PACKET_SAMPLES_48K * this.sampleRate) / 48000);
    return this.n.opusDecode(this.dec, payload, off, len, out, max, 0);
  }

  conceal(out: Int16Array): number {
    this.check('conceal');
    if (out.length < this.frameSamples) throw rangeError(`opus conceal: out holds ${out.length} samples, a frame is ${this.frameSamples}`);
    return this.n.opusDecode(this.dec, null, 0, 0, out, this.frameSamples, 0);
  }

  recover(next: Uint8Array, out: Int16Array, offset?: number, length?: number): number {
    this.check('recover');
    const off = offset ?? 0;
    const len = length ?? next.length - off;
    checkPayload('opus recover', next, off, len);
    if (out.length < this.frameSamples) throw rangeError(`opus recover: out holds ${out.length} samples, a frame is ${this.frameSamples}`);
    return this.n.opusDecode(this.dec, next, off, len, out, this.frameSamples, 1);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.n.close(this.enc);
    this.n.close(this.dec);
    if (this.enc8) this.n.close(this.enc8);
  }
}
