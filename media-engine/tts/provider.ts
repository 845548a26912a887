/**
 * Text-to-speech providers: each turns text (or SSML) into an 8 kHz 16-bit mono WAV on disk, the
 * format the engine plays, or with `wideband` (for a G.722 or Opus leg) a 16-bit mono WAV at the
 * synthesiser's own rate (espeak-ng's 22,050 Hz, flite's 16 kHz), which the engine converts to 16 kHz
 * once. Cloud providers implement the same interface (one that ignores `wideband` gives 8 kHz).
 */
export interface TtsOptions {
  /** BCP-47 language tag, e.g. 'en-US', 'de-DE'. Default 'en-US'. */
  language?: string;
  /** Provider-specific voice: 'male' / 'female', or a native voice name (espeak 'en-us+f3', flite 'slt'). */
  voice?: string;
  /** `text` is SSML. */
  ssml?: boolean;
  /** keep the synthesiser's own rate (for a wideband leg); cached apart from the 8 kHz prompt */
  wideband?: boolean;
}

export interface TtsResult {
  /** 16-bit mono PCM WAV: 8 kHz, or with `wideband` the synthesiser's rate. */
  path: string;
  durationMs: number;
  /** true when served from the cache. */
  cached?: boolean;
}

export interface TtsProvider {
  /** Stable name, part of the cache key. */
  readonly name: string;
  synthesize(text: string, opts?: TtsOptions): Promise<TtsResult>;
}

export type TtsErrorCode = 'EMPTY_TEXT' | 'UNSUPPORTED_LANGUAGE' | 'SYNTHESIS_FAILED' | 'TIMEOUT' | 'UNKNOWN_PROVIDER';

export class TtsError extends Error {
  constructor(
    readonly code: TtsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TtsError';
  }
}
