/**
 * The native codec module, or a clear refusal: what G.722, Opus and the resampler use to reach it.
 */
import { nativeCodecs, nativeCodecsError, type NativeCodecs } from '../native/codecs';
import { CodecError } from './codec';

/** The loaded module; throws ERR_CODEC_UNAVAILABLE naming why it is not there. */
export function requireNative(what: string): NativeCodecs {
  if (!nativeCodecs) throw new CodecError('ERR_CODEC_UNAVAILABLE', `${what} is not available: ${nativeCodecsError ?? 'the native codec module is missing'}`);
  return nativeCodecs;
}
