export { TtsError, type TtsErrorCode, type TtsOptions, type TtsProvider, type TtsResult } from './provider';
export { EspeakProvider, espeakVoiceFor, type EspeakOptions } from './espeak';
export { FliteProvider, fliteAvailable, type FliteOptions } from './flite';
export { CachedTtsProvider } from './cache';
export { configureTtsCache, evictTts, ttsCacheTrimmed, ttsTrimsStarted, TTS_CACHE_DEFAULTS, type TtsCacheBounds } from './cache-trim';
export { createTtsProvider, registerTtsProvider, ttsProviderNames, type TtsFactoryOptions } from './registry';
export { espeakStream, type EspeakStreamOptions } from './espeak-stream';
