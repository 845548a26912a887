/**
 * The engine's codecs behind one interface (codec.ts), what exists on this machine, and a factory.
 * G.711 is pure TypeScript and always there; G.722, Opus and the resampler need the native codec
 * module (scripts/build-native.sh). Where it did not build, `codecAvailability` says so with the
 * reason and `createCodec` refuses those codecs with ERR_CODEC_UNAVAILABLE: an offer of them must be
 * refused (SIP 488), not answered as if they worked.
 */
import { CODEC_NAMES } from '../../core/audio/codec-names';
import { nativeCodecs, nativeCodecsError } from '../native/codecs';
import { type Codec, type CodecName, rangeError } from './codec';
import { G711Codec } from './g711-codec';
import { G722Codec } from './g722';
import { OpusCodec, type OpusOptions } from './opus';

export * from './codec';
export { G711Codec } from './g711-codec';
export { G722Codec, PT_G722 } from './g722';
export { OpusCodec, type OpusOptions } from './opus';
export { Resampler, type ResamplerOptions } from './resampler';

export { CODEC_NAMES };

/** Per codec: usable here, or the reason it is not. */
export function codecAvailability(): Record<CodecName, { available: true } | { available: false; reason: string }> {
  const native = nativeCodecs ? ({ available: true } as const) : ({ available: false, reason: nativeCodecsError ?? 'the native codec module is missing' } as const);
  return { PCMU: { available: true }, PCMA: { available: true }, G722: native, opus: native };
}

export interface CreateCodecOptions extends OpusOptions {
  ptime?: number;
}

/** A new codec instance (close it when the leg ends). Throws ERR_CODEC_UNAVAILABLE or a RangeError. */
export function createCodec(name: CodecName, opts: CreateCodecOptions = {}): Codec {
  switch (name) {
    case 'PCMU':
    case 'PCMA':
      return new G711Codec(name, { ptime: opts.ptime });
    case 'G722':
      return new G722Codec({ ptime: opts.ptime });
    case 'opus':
      return new OpusCodec(opts);
    default:
      throw rangeError(`unknown codec ${String(name)} (known: ${CODEC_NAMES.join(', ')})`);
  }
}
