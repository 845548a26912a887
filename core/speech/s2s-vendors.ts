/**
 * Where the speech-to-speech vendors other than OpenAI (whose Realtime API uses OPENAI_BASE_URL /
 * OPENAI_API_KEY, core/speech/vendors.ts) are reached, and with which platform-wide key (an AI's
 * own engine_url / engine_key override them; docs/ai.md "Speech-to-speech"). Read once in
 * core/config.ts; the keys never reach a log.
 */
import { invalidArgument } from '../errors';
import type { VendorEndpoint } from './vendors';

export interface SpeechToSpeechVendors {
  /** Gemini Live: GEMINI_BASE_URL (the API's root, no version), GEMINI_API_KEY */
  readonly gemini: VendorEndpoint;
  /** Deepgram Voice Agent: DEEPGRAM_AGENT_BASE_URL, DEEPGRAM_API_KEY */
  readonly deepgramAgent: VendorEndpoint;
}

export const S2S_DEFAULT_URLS = {
  gemini: 'https://generativelanguage.googleapis.com',
  deepgramAgent: 'wss://agent.deepgram.com',
} as const;

export function speechToSpeechFromEnv(env: { GEMINI_BASE_URL?: string; GEMINI_API_KEY?: string; DEEPGRAM_AGENT_BASE_URL?: string; DEEPGRAM_API_KEY?: string }): SpeechToSpeechVendors {
  const base = (v: string | undefined, d: string) => (v || d).replace(/\/+$/, '');
  return Object.freeze({
    gemini: { baseUrl: base(env.GEMINI_BASE_URL, S2S_DEFAULT_URLS.gemini), apiKey: env.GEMINI_API_KEY ?? '' },
    deepgramAgent: { baseUrl: base(env.DEEPGRAM_AGENT_BASE_URL, S2S_DEFAULT_URLS.deepgramAgent), apiKey: env.DEEPGRAM_API_KEY ?? '' },
  });
}

/** `parameter.greeting` (our extension; the speech-to-speech greeting): absent or a string of at most 1000 characters; else 400. */
export function checkGreetingParameter(p: Record<string, unknown> | undefined): void {
  const g = p?.greeting;
  if (g === undefined || (typeof g === 'string' && g.length <= 1000)) return;
  throw invalidArgument('parameter.greeting must be a string of at most 1000 characters', [{ field: 'parameter.greeting', issue: typeof g === 'string' ? 'too long' : 'not a string' }]);
}
