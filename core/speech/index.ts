/** Speech records and commands shared by control-api and media-app (docs/speech.md). */
export { checkStt, checkTtsLanguage, checkTtsProvider, STT_PROVIDERS, TTS_PROVIDERS } from './providers';
