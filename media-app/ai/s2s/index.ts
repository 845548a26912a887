/** The link of a speech-to-speech engine_model target (docs/ai.md "Speech-to-speech"). */
import type { AiRow } from '../../../core/repos/ais';
import type { RealtimeTarget } from '../../../core/speech/voices';
import type { EgressPolicy } from '../../../core/net';
import type { AiService } from '../service';
import { openKey } from '../../../core/secrets/keys';
import type { LinkOptions, ModelLink } from './link';
import { OpenAiRealtimeLink } from './openai';
import { GeminiLiveLink } from './gemini';
import { DeepgramAgentLink } from './deepgram';

export type { ModelLink } from './link';

export function linkFor(target: RealtimeTarget, model: string, ai: AiRow, svc: AiService, egress: EgressPolicy): ModelLink {
  const platform = target === 'openai-realtime' ? svc.voices.openai : target === 'gemini-live' ? svc.speechToSpeech.gemini : svc.speechToSpeech.deepgramAgent;
  const greeting = typeof ai.parameter?.greeting === 'string' ? ai.parameter.greeting.trim() : '';
  const o: LinkOptions = {
    model,
    // the AI's own URL gets only its own key (as for a chat engine_url)
    baseUrl: ai.engine_url || platform.baseUrl,
    apiKey: openKey(ai.engine_key) || (ai.engine_url ? '' : platform.apiKey),
    voice: ai.tts_voice_id,
    language: ai.stt_language || 'en-US',
    egress,
    ca: svc.realtimeCa,
    silenceMs: typeof ai.vad_config?.stop_secs === 'number' ? Math.round(ai.vad_config.stop_secs * 1000) : undefined,
    greeting: greeting || undefined,
  };
  switch (target) {
    case 'openai-realtime':
      return new OpenAiRealtimeLink(o);
    case 'gemini-live':
      return new GeminiLiveLink(o);
    case 'deepgram-agent':
      return new DeepgramAgentLink(o);
  }
}
