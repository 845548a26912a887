/**
 * The native codec module (codecs.c with codec_opus.c, codec_g722.c, codec_resample.c, codec_aec.c), built at set-up by
 * scripts/build-native.sh against Debian's libopus, libspandsp and libspeexdsp. `nativeCodecs` is null
 * when the build is not there; `nativeCodecsError` then says why, and the engine has G.711 only
 * (media-engine/codecs/index.ts refuses Opus and G.722 with that reason rather than pretending).
 *
 * Every function checks its arguments' types and lengths and throws a TypeError/RangeError naming the
 * argument; decode errors throw an Error whose `code` is ERR_OPUS_INVALID_PACKET and the like.
 * Handles are opaque: only the kind of handle a function expects passes, and a closed one throws
 * ERR_CODEC_CLOSED. `close` frees the native state at once; a handle never closed is freed when collected.
 */
import path from 'node:path';

declare const handleBrand: unique symbol;
/** An opaque native state of one kind. */
export type NativeHandle<K extends string> = { readonly [handleBrand]: K };
export type OpusEncoderHandle = NativeHandle<'opus-encoder'>;
export type OpusDecoderHandle = NativeHandle<'opus-decoder'>;
export type G722EncoderHandle = NativeHandle<'g722-encoder'>;
export type G722DecoderHandle = NativeHandle<'g722-decoder'>;
export type ResamplerHandle = NativeHandle<'resampler'>;
export type EchoCancellerHandle = NativeHandle<'echo-canceller'>;

export interface NativeCodecs {
  /** Frees any handle's state now; idempotent. */
  close(handle: NativeHandle<string>): void;
  readonly opusVersion: string;
  /**
   * sampleRate 8000 | 16000 | 48000; complexity 0-10; bitrate 6000-510000 bit/s; fec, dtx 0 | 1; lossPercent 0-100
   * (the FEC's expected loss); maxPlaybackRate 8000-48000 Hz (the widest band encoded: ≤ 8000 narrow band…).
   */
  opusEncoderCreate(sampleRate: number, complexity: number, bitrate: number, fec: number, lossPercent: number, dtx: number, maxPlaybackRate: number): OpusEncoderHandle;
  /** One frame of frameSamples from pcm[0..]: bytes written into out (1-2 bytes: a DTX frame, not worth sending). */
  opusEncode(h: OpusEncoderHandle, pcm: Int16Array, frameSamples: number, out: Uint8Array): number;
  /** on 1: code narrow band (the frames carry 8 kHz audio); 0: the encoder's own choice under its maxPlaybackRate. */
  opusEncoderNarrow(h: OpusEncoderHandle, on: number): void;
  /** The encoder starts afresh (OPUS_RESET_STATE). */
  opusEncoderReset(h: OpusEncoderHandle): void;
  /** sampleRate 8000 | 12000 | 16000 | 24000 | 48000 (the output rate; any packet decodes at any rate). */
  opusDecoderCreate(sampleRate: number): OpusDecoderHandle;
  /**
   * payload null: conceal one lost frame of frameSamples. fec 1: rebuild the lost frame before `payload`
   * from its in-band FEC (concealment when it carries none). fec 0: decode the packet (≤ frameSamples).
   */
  opusDecode(h: OpusDecoderHandle, payload: Uint8Array | null, offset: number, length: number, out: Int16Array, frameSamples: number, fec: number): number;
  opusPacketSamples(payload: Uint8Array, offset: number, length: number, sampleRate: number): number;
  g722EncoderCreate(): G722EncoderHandle;
  /** samples (even) of 16 kHz pcm into samples / 2 code words. */
  g722Encode(h: G722EncoderHandle, pcm: Int16Array, samples: number, out: Uint8Array): number;
  /** samples of 8 kHz pcm (audio with nothing above 4 kHz) into `samples` code words, the upper band empty. */
  g722EncodeNarrow(h: G722EncoderHandle, pcm: Int16Array, samples: number, out: Uint8Array): number;
  g722DecoderCreate(): G722DecoderHandle;
  /** length code words into 2 × length samples at 16 kHz (and into the PLC's history). */
  g722Decode(h: G722DecoderHandle, payload: Uint8Array, offset: number, length: number, out: Int16Array): number;
  /** samples of concealment for a lost stretch. */
  g722Conceal(h: G722DecoderHandle, out: Int16Array, samples: number): number;
  /** quality 0-10 (speexdsp's; 10 is best). */
  resamplerCreate(inRate: number, outRate: number, quality: number): ResamplerHandle;
  /** input[0..samples) converted into out: samples written; throws when out cannot take it all. */
  resample(h: ResamplerHandle, input: Int16Array, samples: number, out: Int16Array): number;
  /** The filter's delay, in input samples. */
  resamplerLatency(h: ResamplerHandle): number;
  /**
   * rate 8000-48000; frameSamples 40-2048; tailSamples (the longest echo it models) frameSamples-48000;
   * residualDb 0 (the adaptive filter alone) or 1-60 (speex_preprocess suppresses the echo left by up to that).
   */
  aecCreate(rate: number, frameSamples: number, tailSamples: number, residualDb: number): EchoCancellerHandle;
  /** One frame: near (the phone's audio) with the echo of far (what was sent) taken out, into out (may be near). */
  aecProcess(h: EchoCancellerHandle, near: Int16Array, far: Int16Array, out: Int16Array): void;
  /** Forgets the echo path. */
  aecReset(h: EchoCancellerHandle): void;
}

export const NATIVE_CODECS_PATH = path.join(__dirname, 'build', 'codecs.node');

function load(): { codecs: NativeCodecs | null; error: string | null } {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a native addon at a built path, loaded synchronously; its absence is caught
    return { codecs: require(NATIVE_CODECS_PATH) as NativeCodecs, error: null };
  } catch (e) {
    // the first line only: Node appends the require stack on the next lines
    const why = (e as Error).message.split('\n')[0];
    return { codecs: null, error: `the native codec module did not load (${why}); run bash scripts/build-native.sh` };
  }
}

const loaded = load();
export const nativeCodecs: NativeCodecs | null = loaded.codecs;
/** Why Opus, G.722 and the resampler are not there, or null. */
export const nativeCodecsError: string | null = loaded.error;
