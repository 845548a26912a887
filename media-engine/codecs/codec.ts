/**
 * The codec interface every audio codec of the engine implements (G.711 µ-law/A-law, G.722, Opus), so
 * that negotiation, the per-leg receive/send paths, the bridge and the mixer can treat them alike.
 *
 * One instance = one direction pair of one leg: it owns its encoder and decoder state (native for
 * G.722 and Opus) until close(). Per frame nothing is allocated: encode and decode write into
 * buffers the caller made once (sizes from `maxPayloadBytes` and `frameSamples`).
 *
 * Rates: `sampleRate` is the PCM the codec takes and gives (8000 for G.711, 16000 for G.722, 16000 or
 * 48000 for Opus); `clockRate` is the RTP timestamp clock of its rtpmap (8000 for G.722 although its
 * audio is 16 kHz, RFC 3551; 48000 for Opus whatever its audio rate, RFC 7587). `frameTicks` is what the
 * RTP timestamp advances per frame.
 */

import type { CodecName } from '../../core/audio/codec-names';

export type { CodecName };

/** A static payload type of RFC 3551, or one agreed in the SDP (dynamic, 96-127). */
export type PayloadTypeRule = { readonly kind: 'static'; readonly pt: number } | { readonly kind: 'dynamic' };

export interface CodecInfo {
  readonly name: CodecName;
  /** RTP timestamp clock (the rtpmap rate). */
  readonly clockRate: number;
  /** PCM rate of encode's input and decode's output. */
  readonly sampleRate: number;
  /** PCM channels (mono everywhere in the engine). */
  readonly channels: 1;
  /** Channels written in the rtpmap (Opus is always "opus/48000/2", RFC 7587). */
  readonly rtpmapChannels: 1 | 2;
  readonly frameMs: number;
  /** PCM samples per frame at sampleRate. */
  readonly frameSamples: number;
  /** RTP timestamp advance per frame at clockRate. */
  readonly frameTicks: number;
  readonly payloadType: PayloadTypeRule;
  /** The size of the `out` buffer encode needs. */
  readonly maxPayloadBytes: number;
  /** True when recover() rebuilds a lost frame from the next packet (Opus in-band FEC). */
  readonly hasFec: boolean;
}

export interface Codec extends CodecInfo {
  /** One frame (pcm[0..frameSamples)) into `out`: bytes written. Throws RangeError on a short pcm or out. */
  encode(pcm: Int16Array, out: Uint8Array): number;
  /**
   * One packet's payload (payload[offset..offset+length), default the whole array) into `out`: samples
   * written. Throws an Error with `code` (ERR_OPUS_INVALID_PACKET, ERR_OUT_OF_RANGE…) on a payload it
   * cannot decode or an `out` too short; the caller then conceals that frame.
   */
  decode(payload: Uint8Array, out: Int16Array, offset?: number, length?: number): number;
  /** One lost frame synthesised from what came before: frameSamples written into `out`. */
  conceal(out: Int16Array): number;
  /**
   * The lost frame just before `next` (the packet that arrived after the gap), into `out`: rebuilt from
   * next's FEC data where the codec has it (hasFec), concealed otherwise. Call decode(next) after it.
   */
  recover(next: Uint8Array, out: Int16Array, offset?: number, length?: number): number;
  /**
   * Wideband codecs, for frames whose audio came at 8 kHz (a G.711 peer, an 8 kHz prompt): `encodeNarrow`
   * codes such a frame from its frameMs × 8 samples at 8 kHz, not brought up to sampleRate (G.722: the upper
   * band sent empty; Opus: an 8 kHz encoder, narrow band). Where the frame was brought up anyway, Opus is
   * told to code narrow band while such frames last (`narrowBand(true)`, back with false).
   */
  encodeNarrow?(pcm8k: Int16Array, out: Uint8Array): number;
  narrowBand?(on: boolean): void;
  /** Frees the codec's state now; any later call throws ERR_CODEC_CLOSED. Idempotent. */
  close(): void;
  readonly closed: boolean;
}

/** An Error with a stable `code` (the ones Node uses for argument errors, or ERR_CODEC_*). */
export class CodecError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

/** A RangeError with code ERR_OUT_OF_RANGE, as the native module throws. */
export function rangeError(message: string): RangeError & { code: string } {
  return Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' });
}

/** Throws when `value` is not an integer in [min, max]; the message names the option. */
export function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw rangeError(`${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
  return value;
}

/** Throws unless payload[offset..offset+length) lies within the payload (no tuple: this runs per packet). */
export function checkPayload(fn: string, payload: Uint8Array, offset: number, length: number): void {
  if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0 || offset + length > payload.length) {
    throw rangeError(`${fn}: offset ${String(offset)} and length ${String(length)} do not lie within the ${payload.length}-byte payload`);
  }
}
