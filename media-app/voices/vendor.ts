/**
 * One cloud voice: text in, 8 kHz 16-bit mono PCM out as the vendor streams it (the engine's rate;
 * the media worker converts to the leg's codec and rate), or 16 kHz for a wideband leg from a vendor
 * that sends linear PCM above 8 kHz (`pcmRate`, `VoiceRequest.rate`). Each adapter asks for the vendor's
 * telephony format where it has one (µ-law 8 kHz) and otherwise resamples what it gets.
 * Every connection goes through the egress policy (core/net).
 */
import type { EgressPolicy } from '../../core/net';
import type { VendorTtsType } from '../../core/speech/voices';

export interface VoiceRequest {
  text: string;
  /** vendor voice id ('' = the adapter's default voice) */
  voice: string;
  /** BCP-47 */
  language: string;
  /** the vendor's base URL (no trailing slash) */
  baseUrl: string;
  apiKey: string;
  egress: EgressPolicy;
  signal: AbortSignal;
  /**
   * The rate wanted (default 8000): 16000 for a wideband leg. An adapter whose vendor sends linear PCM
   * above 8 kHz (`pcmRate`) gives it at this rate, resampled once; a µ-law vendor's is 8 kHz anyway.
   */
  rate?: 8000 | 16000;
  /** aws: the region the request is signed for */
  region?: string;
}

export interface VendorVoice {
  readonly name: VendorTtsType;
  /** the vendor's own rate when it sends linear PCM above 8 kHz (it can then give 16 kHz); unset for µ-law vendors */
  readonly pcmRate?: number;
  /** PCM chunks (16-bit, mono; 8 kHz, or `req.rate` with `pcmRate`) as they arrive; ends when the vendor has said it all. */
  stream(req: VoiceRequest): AsyncIterable<Int16Array>;
}

/** auth: the vendor refused the key; rate_limited: 429; refused: the egress policy said no; failed: anything else. */
export type VoiceErrorCode = 'auth' | 'rate_limited' | 'refused' | 'failed' | 'timeout' | 'no_key';

export class VoiceError extends Error {
  constructor(
    readonly vendor: string,
    readonly code: VoiceErrorCode,
    message: string,
  ) {
    super(`${vendor}: ${message}`);
    this.name = 'VoiceError';
  }
}

/** A key made of two parts (`<id>:<secret>`, split at the first ':'); a key without them is refused before anything is sent. */
export function keyPair(vendor: string, key: string, shape: string): { id: string; secret: string } {
  const i = key.indexOf(':');
  if (i <= 0 || i === key.length - 1) throw new VoiceError(vendor, 'auth', `the key must be "${shape}"`);
  return { id: key.slice(0, i), secret: key.slice(i + 1) };
}

/** The error for an HTTP status the vendor answered (its body is not echoed: it may carry anything). */
export function statusError(vendor: string, status: number): VoiceError {
  if (status === 401 || status === 403) return new VoiceError(vendor, 'auth', `the API key was refused (HTTP ${status})`);
  if (status === 429) return new VoiceError(vendor, 'rate_limited', 'rate limited by the vendor (HTTP 429)');
  return new VoiceError(vendor, 'failed', `synthesis failed (HTTP ${status})`);
}
