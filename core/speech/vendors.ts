/**
 * Where each cloud voice vendor is reached and with which platform-wide key:
 * `<VENDOR>_BASE_URL` (default: the vendor's public endpoint) and `<VENDOR>_API_KEY` (an AI's own
 * `parameter.tts_key` overrides it). Read once in core/config.ts; the keys never reach a log.
 */
import type { VendorTtsType } from './voices';

export interface VendorEndpoint {
  /** http(s) or ws(s) base URL, no trailing slash */
  baseUrl: string;
  /** '' when the operator set none */
  apiKey: string;
}

export type VoiceVendors = Readonly<Record<VendorTtsType, VendorEndpoint>>;

/** The vendors' public endpoints (their API references). */
export const VENDOR_DEFAULT_URLS: Readonly<Record<VendorTtsType, string>> = {
  elevenlabs: 'https://api.elevenlabs.io',
  cartesia: 'https://api.cartesia.ai',
  deepgram: 'https://api.deepgram.com',
  openai: 'https://api.openai.com/v1',
  // the region is part of the host: set AZURE_BASE_URL to https://<region>.tts.speech.microsoft.com
  azure: 'https://eastus.tts.speech.microsoft.com',
  lmnt: 'https://api.lmnt.com',
};

/** The environment variable prefix of each vendor. */
export const VENDOR_ENV = {
  elevenlabs: 'ELEVENLABS',
  cartesia: 'CARTESIA',
  deepgram: 'DEEPGRAM',
  openai: 'OPENAI',
  azure: 'AZURE',
  lmnt: 'LMNT',
} as const satisfies Readonly<Record<VendorTtsType, string>>;

/** The variables read here; core/config.ts declares and validates each one. */
export type VendorEnvKey = `${(typeof VENDOR_ENV)[VendorTtsType]}_${'BASE_URL' | 'API_KEY'}`;

/** `env`: the validated (trimmed) values from core/config.ts. */
export function voiceVendorsFromEnv(env: { readonly [K in VendorEnvKey]?: string }): VoiceVendors {
  const one = (v: VendorTtsType): VendorEndpoint => ({
    baseUrl: (env[`${VENDOR_ENV[v]}_BASE_URL`] || VENDOR_DEFAULT_URLS[v]).replace(/\/+$/, ''),
    apiKey: env[`${VENDOR_ENV[v]}_API_KEY`] ?? '',
  });
  return Object.freeze({
    elevenlabs: one('elevenlabs'),
    cartesia: one('cartesia'),
    deepgram: one('deepgram'),
    openai: one('openai'),
    azure: one('azure'),
    lmnt: one('lmnt'),
  });
}

/** Google Speech-to-Text (recordings' `google` engine, media-app/speech/recording-cloud.ts): its public endpoint. */
export const GOOGLE_STT_DEFAULT_URL = 'https://speech.googleapis.com';

/** GOOGLE_STT_BASE_URL (default the public endpoint) and GOOGLE_API_KEY of `env`. */
export function googleSttFromEnv(env: { readonly GOOGLE_STT_BASE_URL?: string; readonly GOOGLE_API_KEY?: string }): VendorEndpoint {
  return { baseUrl: (env.GOOGLE_STT_BASE_URL?.trim() || GOOGLE_STT_DEFAULT_URL).replace(/\/+$/, ''), apiKey: env.GOOGLE_API_KEY?.trim() ?? '' };
}
