/**
 * Where each cloud voice vendor is reached and with which platform-wide key:
 * `<VENDOR>_BASE_URL` (default: the vendor's public endpoint) and `<VENDOR>_API_KEY` (an AI's own
 * `parameter.tts_key` overrides it). Read once in core/config.ts; the keys never reach a log.
 */
import type { VendorTtsType } from './voices';

export interface VendorEndpoint {
  /** http(s) or ws(s) base URL, no trailing slash */
  baseUrl: string;
  /** '' when the operator set none; aws: `<access key id>:<secret access key>`, playht: `<user id>:<API key>` */
  apiKey: string;
  /** aws only: the signing region (AWS_REGION, else the one in an amazonaws.com base URL, else us-east-1) */
  region?: string;
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
  // AWS_REGION picks the regional endpoint (https://polly.<region>.amazonaws.com)
  aws: 'https://polly.us-east-1.amazonaws.com',
  google: 'https://texttospeech.googleapis.com',
  rime: 'https://users.rime.ai',
  playht: 'https://api.play.ht',
};

/** The environment variable prefix of each vendor. */
export const VENDOR_ENV = {
  elevenlabs: 'ELEVENLABS',
  cartesia: 'CARTESIA',
  deepgram: 'DEEPGRAM',
  openai: 'OPENAI',
  azure: 'AZURE',
  lmnt: 'LMNT',
  aws: 'AWS',
  google: 'GOOGLE',
  rime: 'RIME',
  playht: 'PLAYHT',
} as const satisfies Readonly<Record<VendorTtsType, string>>;

/** The variables read here; core/config.ts declares and validates each one. */
export type VendorEnvKey = `${(typeof VENDOR_ENV)[VendorTtsType]}_${'BASE_URL' | 'API_KEY'}`;

/** Keys made of two parts, in the variables their vendors' own tools use (AWS's SDKs, PlayHT's). */
export type VendorExtraEnvKey = 'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY' | 'AWS_REGION' | 'PLAYHT_USER_ID';

/** Where an operator sets a vendor's platform-wide key (said in the error when there is none). */
export function vendorKeyVariable(v: VendorTtsType): string {
  if (v === 'aws') return 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_API_KEY)';
  if (v === 'playht') return 'PLAYHT_USER_ID and PLAYHT_API_KEY';
  return `${VENDOR_ENV[v]}_API_KEY`;
}

/** `id:secret` of two variables, '' unless both are set. */
const pair = (id: string | undefined, secret: string | undefined) => (id && secret ? `${id}:${secret}` : '');

/** `env`: the validated (trimmed) values from core/config.ts. */
export function voiceVendorsFromEnv(env: { readonly [K in VendorEnvKey | VendorExtraEnvKey]?: string }): VoiceVendors {
  const one = (v: VendorTtsType): VendorEndpoint => ({
    baseUrl: (env[`${VENDOR_ENV[v]}_BASE_URL`] || VENDOR_DEFAULT_URLS[v]).replace(/\/+$/, ''),
    apiKey: env[`${VENDOR_ENV[v]}_API_KEY`] ?? '',
  });
  const awsBase = (env.AWS_BASE_URL || (env.AWS_REGION ? `https://polly.${env.AWS_REGION}.amazonaws.com` : VENDOR_DEFAULT_URLS.aws)).replace(/\/+$/, '');
  const awsRegion = env.AWS_REGION || /^https?:\/\/polly\.([a-z0-9-]+)\.amazonaws\.com/.exec(awsBase)?.[1] || 'us-east-1';
  return Object.freeze({
    elevenlabs: one('elevenlabs'),
    cartesia: one('cartesia'),
    deepgram: one('deepgram'),
    openai: one('openai'),
    azure: one('azure'),
    lmnt: one('lmnt'),
    aws: { baseUrl: awsBase, apiKey: env.AWS_API_KEY || pair(env.AWS_ACCESS_KEY_ID, env.AWS_SECRET_ACCESS_KEY), region: awsRegion },
    google: one('google'),
    rime: one('rime'),
    // PLAYHT_API_KEY alone may be `<user id>:<API key>`
    playht: { ...one('playht'), apiKey: env.PLAYHT_USER_ID ? pair(env.PLAYHT_USER_ID, env.PLAYHT_API_KEY) : (env.PLAYHT_API_KEY ?? '') },
  });
}

/** Google Speech-to-Text (recordings' `google` engine, media-app/speech/recording-cloud.ts): its public endpoint. */
export const GOOGLE_STT_DEFAULT_URL = 'https://speech.googleapis.com';

/** GOOGLE_STT_BASE_URL (default the public endpoint) and GOOGLE_API_KEY of `env`. */
export function googleSttFromEnv(env: { readonly GOOGLE_STT_BASE_URL?: string; readonly GOOGLE_API_KEY?: string }): VendorEndpoint {
  return { baseUrl: (env.GOOGLE_STT_BASE_URL?.trim() || GOOGLE_STT_DEFAULT_URL).replace(/\/+$/, ''), apiKey: env.GOOGLE_API_KEY?.trim() ?? '' };
}
