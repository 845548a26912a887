export { SttError, sampleRateOf, type SampleRate, type Direction, type SttProvider, type SttStream, type SttStreamEvents, type SttStreamOptions, type TranscriptEvent } from './provider';
export { PocketsphinxProvider, phrasesToJsgf, type PocketsphinxOptions } from './pocketsphinx';
export { Upsampler2x } from './upsample';
export { DeepgramProvider, deepgramFromEnv, type DeepgramOptions } from './deepgram';
export { CartesiaSttProvider } from './cartesia';
export { ElevenLabsSttProvider } from './elevenlabs';
import { SttError, type SttProvider } from './provider';
import { PocketsphinxProvider } from './pocketsphinx';
import { deepgramFromEnv } from './deepgram';
import { CartesiaSttProvider } from './cartesia';
import { ElevenLabsSttProvider } from './elevenlabs';

const providers = new Map<string, () => SttProvider>([
  ['pocketsphinx', () => new PocketsphinxProvider()],
  // configured from the environment when a stream is made (DEEPGRAM_API_KEY, DEEPGRAM_BASE_URL or DEEPGRAM_URL); through the egress policy
  ['deepgram', () => deepgramFromEnv()],
  // <VENDOR>_BASE_URL / <VENDOR>_API_KEY read when a stream is made; every connection through the egress policy
  ['cartesia', () => new CartesiaSttProvider()],
  ['elevenlabs', () => new ElevenLabsSttProvider()],
]);

/** Register a provider factory under a name (cloud providers). */
export function registerSttProvider(name: string, factory: () => SttProvider): void {
  providers.set(name, factory);
}

/** The provider for `name` (default 'pocketsphinx'). */
export function createSttProvider(name = 'pocketsphinx'): SttProvider {
  const f = providers.get(name);
  if (!f) throw new SttError('UNKNOWN_PROVIDER', `unknown STT provider "${name}"`);
  return f();
}
