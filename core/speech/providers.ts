/**
 * Which TTS and STT providers and languages the platform accepts, checked by control-api before
 * anything is created (so bad input is a 400, not a session that fails later on a node).
 *
 * TTS: provider_a (espeak-ng, default), provider_b and provider_c (flite voices, espeak-ng without
 * flite): media-engine/tts/registry.ts. Languages: whatever espeak-ng has a voice for (asked
 * through the lookup the caller passes, since core does not import the media engine).
 * STT: '' or 'pocketsphinx' (offline, English only), 'deepgram', 'cartesia', 'elevenlabs' (cloud, need
 * <VENDOR>_API_KEY on the media-app nodes). voipbin's 'gcp' and 'aws' are refused with a clear message.
 */
import { invalidArgument } from '../errors';

export const TTS_PROVIDERS = ['provider_a', 'provider_b', 'provider_c'] as const;
export type TtsProviderName = (typeof TTS_PROVIDERS)[number];

export const STT_PROVIDERS = ['pocketsphinx', 'deepgram', 'cartesia', 'elevenlabs'] as const;
/** Engines that transcribe a recording's file only (our extension; voipbin's `gcp` is Google's). */
export const RECORDING_ENGINES = ['google', 'openai'] as const;
export type SttProviderName = (typeof STT_PROVIDERS)[number] | (typeof RECORDING_ENGINES)[number];

const BCP47 = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/;

/** The TTS provider to use ('' or absent → provider_a); 400 on anything else. */
export function checkTtsProvider(p: string | undefined): TtsProviderName {
  const name = p === undefined || p === '' ? 'provider_a' : p;
  if (!(TTS_PROVIDERS as readonly string[]).includes(name)) {
    throw invalidArgument(`provider must be one of ${TTS_PROVIDERS.join(', ')}`, [{ field: 'provider', issue: `unknown provider "${p}"` }]);
  }
  return name as TtsProviderName;
}

/**
 * A language the embedded TTS can speak ('en-US' when absent). `voiceFor` is the TTS's lookup
 * (media-engine's espeakVoiceFor), which throws for a language it has no voice for.
 */
export function checkTtsLanguage(language: string | undefined, voiceFor: (language: string) => unknown): string {
  const lang = language || 'en-US';
  if (!BCP47.test(lang)) throw invalidArgument('language must be a BCP-47 tag such as en-US', [{ field: 'language', issue: 'not a BCP-47 tag' }]);
  try {
    voiceFor(lang);
  } catch {
    throw invalidArgument(`language ${lang} is not supported by the text-to-speech provider`, [{ field: 'language', issue: 'unsupported' }]);
  }
  return lang;
}

/**
 * The STT provider ('' or absent → pocketsphinx) and language, checked together. `recording`: the
 * transcribe is of a recording, which the file engines (google, or voipbin's gcp, and openai) take too.
 */
export function checkStt(provider: string | undefined, language: string | undefined, recording = false): { provider: SttProviderName; language: string } {
  const asked = provider === undefined || provider === '' ? 'pocketsphinx' : provider;
  const name = recording && asked === 'gcp' ? 'google' : asked;
  const file = (RECORDING_ENGINES as readonly string[]).includes(name);
  if (file && !recording) {
    throw invalidArgument(`provider ${name} transcribes recordings only; for a live call use pocketsphinx, deepgram, cartesia or elevenlabs`, [{ field: 'provider', issue: 'recordings only' }]);
  }
  if (name === 'gcp' || name === 'aws') {
    throw invalidArgument(`provider ${name} is not available on this platform; use pocketsphinx (default), deepgram, cartesia or elevenlabs`, [{ field: 'provider', issue: 'not available' }]);
  }
  if (!file && !(STT_PROVIDERS as readonly string[]).includes(name)) {
    const all = recording ? [...STT_PROVIDERS, ...RECORDING_ENGINES] : STT_PROVIDERS;
    throw invalidArgument(`provider must be one of ${all.join(', ')}`, [{ field: 'provider', issue: `unknown provider "${provider}"` }]);
  }
  const lang = language || 'en-US';
  if (!BCP47.test(lang)) throw invalidArgument('language must be a BCP-47 tag such as en-US', [{ field: 'language', issue: 'not a BCP-47 tag' }]);
  if (name === 'pocketsphinx' && !lang.toLowerCase().startsWith('en')) {
    throw invalidArgument(`pocketsphinx has only an English model; language ${lang} needs another provider`, [{ field: 'language', issue: 'unsupported' }]);
  }
  return { provider: name as SttProviderName, language: lang };
}
