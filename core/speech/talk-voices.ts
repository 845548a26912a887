/**
 * Which cloud voice speaks for `talk` and speakings (docs/speech.md "Cloud voices for talk"): the
 * operator maps the providers `provider_a|b|c` to a vendor with TTS_PROVIDER_A|B|C =
 * `<vendor>[:<voice id>]` (e.g. `elevenlabs:21m00Tcm4TlvDq8ikWAM`); the vendor is reached and keyed
 * as for ai_talk (`<VENDOR>_BASE_URL`, the platform's `<VENDOR>_API_KEY`). A provider left unmapped
 * stays the local voice (espeak-ng / flite); a mapped one never falls back to it.
 */
import { TTS_PROVIDERS, type TtsProviderName } from './providers';
import { isVendorTts, VENDOR_TTS_TYPES, type VendorTtsType } from './voices';

export interface TalkVoice {
  type: VendorTtsType;
  /** the vendor's voice id ('' = the adapter's default) */
  voice: string;
}

export type TalkVoices = Readonly<Partial<Record<TtsProviderName, TalkVoice>>>;

/** The variable of each provider. */
export const TALK_VOICE_ENV = { provider_a: 'TTS_PROVIDER_A', provider_b: 'TTS_PROVIDER_B', provider_c: 'TTS_PROVIDER_C' } as const satisfies Record<TtsProviderName, string>;
export type TalkVoiceEnvKey = (typeof TALK_VOICE_ENV)[TtsProviderName];

/** `<vendor>[:<voice id>]` → the voice; throws an Error saying what is wrong. */
export function parseTalkVoice(v: string): TalkVoice {
  const i = v.indexOf(':');
  const type = (i < 0 ? v : v.slice(0, i)).trim();
  const voice = i < 0 ? '' : v.slice(i + 1).trim();
  if (!isVendorTts(type)) throw new Error(`"${type}" is not a cloud voice with an adapter; use <vendor>[:<voice id>] with one of: ${VENDOR_TTS_TYPES.join(', ')}`);
  return { type, voice };
}

/** The mapped providers (unset or empty: the local voice). */
export function talkVoicesFromEnv(env: { readonly [K in TalkVoiceEnvKey]?: string }): TalkVoices {
  const out: Partial<Record<TtsProviderName, TalkVoice>> = {};
  for (const p of TTS_PROVIDERS) {
    const v = env[TALK_VOICE_ENV[p]];
    if (v) out[p] = parseTalkVoice(v);
  }
  return Object.freeze(out);
}

/** The cloud voice a talk or speaking with `provider` ('' = provider_a) speaks with, or null for the local one. */
export function talkVoiceFor(voices: TalkVoices, provider: string | undefined): TalkVoice | null {
  const p = (provider || 'provider_a') as TtsProviderName;
  return (TTS_PROVIDERS as readonly string[]).includes(p) ? (voices[p] ?? null) : null;
}
