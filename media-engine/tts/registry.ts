/**
 * TTS providers by name. The platform's provider names map to engines available offline here:
 *   provider_a → espeak-ng (default)
 *   provider_b → flite, voice slt (female), when flite is installed; else espeak-ng with variant f3
 *   provider_c → flite, voice rms (male), when flite is installed; else espeak-ng with variant m3
 *   (flite speaks English only: other languages go to espeak-ng with the same variant)
 *   espeak-ng, flite → themselves
 * Cloud providers register under their own names with `registerTtsProvider`.
 */
import path from 'node:path';
import { CachedTtsProvider, type PathTtsProvider } from './cache';
import { ttsCacheBounds, type TtsCacheBounds } from './cache-trim';
import { EspeakProvider } from './espeak';
import { FliteProvider, fliteAvailable } from './flite';
import { TtsError } from './provider';

export interface TtsFactoryOptions {
  /** Directory for synthesized (cached) prompts. */
  cacheDir: string;
  /** The directory's bound (cache-trim.ts); absent: configureTtsCache's, else the defaults. */
  bounds?: TtsCacheBounds;
}

type Factory = (o: TtsFactoryOptions) => PathTtsProvider;

const factories = new Map<string, Factory>();
let flite: boolean | null = null;
const hasFlite = () => (flite ??= fliteAvailable());

export function registerTtsProvider(name: string, factory: Factory): void {
  factories.set(name, factory);
}

export function ttsProviderNames(): string[] {
  return [...factories.keys()];
}

/** A cached provider for `name` (default 'provider_a'); throws UNKNOWN_PROVIDER. */
export function createTtsProvider(name = 'provider_a', o: TtsFactoryOptions): CachedTtsProvider {
  const f = factories.get(name);
  if (!f) throw new TtsError('UNKNOWN_PROVIDER', `unknown TTS provider "${name}" (known: ${ttsProviderNames().join(', ')})`);
  return new CachedTtsProvider(f(o), path.join(o.cacheDir), ttsCacheBounds(o.bounds));
}

registerTtsProvider('espeak-ng', (o) => new EspeakProvider({ outDir: o.cacheDir }));
registerTtsProvider('provider_a', (o) => new EspeakProvider({ outDir: o.cacheDir, name: 'provider_a:espeak-ng' }));
registerTtsProvider('flite', (o) => new FliteProvider({ outDir: o.cacheDir }));
registerTtsProvider('provider_b', (o) =>
  hasFlite()
    ? new FliteProvider({ outDir: o.cacheDir, voice: 'slt', name: 'provider_b:flite-slt', fallback: new EspeakProvider({ outDir: o.cacheDir, variant: 'f3' }) })
    : new EspeakProvider({ outDir: o.cacheDir, variant: 'f3', name: 'provider_b:espeak-ng-f3' }),
);
registerTtsProvider('provider_c', (o) =>
  hasFlite()
    ? new FliteProvider({ outDir: o.cacheDir, voice: 'rms', name: 'provider_c:flite-rms', fallback: new EspeakProvider({ outDir: o.cacheDir, variant: 'm3' }) })
    : new EspeakProvider({ outDir: o.cacheDir, variant: 'm3', name: 'provider_c:espeak-ng-m3' }),
);
