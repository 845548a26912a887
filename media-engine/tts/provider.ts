/**
 * Text-to-speech providers: each turns text (or SSML) into an 8 kHz 16-bit mono WAV on disk, the
 * format the engine plays. Cloud providers implement the same interface.
 */
export interface TtsOptions {
  /** BCP-47 language tag, e.g. 'en-US', 'de-DE'. Default 'en-US'. */
  language?: string;
  /** Provider-specific voice: 'male' / 'female', or a native voice name (espeak 'en-us+f3', flite 'slt'). */
  voice?: string;
  /** `text` is SSML. */
  ssml?: boolean;
}

export interface TtsResult {
  /** 8 kHz 16-bit mono PCM WAV. */
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
