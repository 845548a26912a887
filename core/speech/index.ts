/** Speech records and commands shared by control-api and media-app (docs/speech.md). */
import './commands';
export type { SpeechCommands } from './commands';
export { checkStt, checkTtsLanguage, checkTtsProvider, STT_PROVIDERS, TTS_PROVIDERS } from './providers';
