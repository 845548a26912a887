export { SttError, type Direction, type SttProvider, type SttStream, type SttStreamOptions, type TranscriptEvent } from './provider';
export { PocketsphinxProvider, phrasesToJsgf, type PocketsphinxOptions } from './pocketsphinx';
export { Upsampler2x } from './upsample';
import { SttError, type SttProvider } from './provider';
import { PocketsphinxProvider } from './pocketsphinx';

const providers = new Map<string, () => SttProvider>([['pocketsphinx', () => new PocketsphinxProvider()]]);

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
