/** The platform actions an AI's tools reach from a flow (variables, SMS), shared by ai_talk and ai_task. */
import type { AiActions } from '../../core/ai/tools';
import { messagingPort } from '../../core/messaging/flow-port';
import { SYSTEM_PREFIX } from '../../core/flow/variables';
import type { ActionContext } from '../flow/actions/base';

export function flowActions(ctx: ActionContext): AiActions {
  return {
    setVariables(vars) {
      for (const [k, v] of Object.entries(vars)) {
        // the platform's own namespace is not the AI's to write
        if (!k.startsWith(SYSTEM_PREFIX) && !k.startsWith('voipbin.')) ctx.vars.set(k, v);
      }
      return 'variables set';
    },
    getVariables: () => ctx.vars.snapshot(),
    async sendMessage(args) {
      const port = messagingPort();
      if (!port) return 'error: messaging is not available on this server';
      const m = await port.sendMessage(ctx.customerId, {
        source: args.source ? { type: 'tel', target: args.source } : undefined,
        destinations: args.destinations.map((t) => ({ type: 'tel', target: t })),
        text: args.text,
      });
      return `message ${m.id} sent`;
    },
  };
}

/** Voice settings of an AI: STT/TTS names mapped onto what this server has, VAD timings. */
export function voiceSettings(ai: { stt_type: string; stt_language: string; tts_type: string; tts_voice_id: string; vad_config: Record<string, number>; parameter: Record<string, unknown> }) {
  const local = ['provider_a', 'provider_b', 'provider_c', 'espeak-ng', 'flite'];
  const phrases = Array.isArray(ai.parameter?.stt_phrases) ? (ai.parameter.stt_phrases as unknown[]).map(String) : undefined;
  return {
    language: ai.stt_language || 'en-US',
    sttProvider: ai.stt_type || undefined,
    ttsProvider: local.includes(ai.tts_type) ? ai.tts_type : undefined,
    voice: local.includes(ai.tts_type) ? ai.tts_voice_id || undefined : undefined,
    phrases,
    startSecs: typeof ai.vad_config?.start_secs === 'number' ? ai.vad_config.start_secs : undefined,
    stopSecs: typeof ai.vad_config?.stop_secs === 'number' ? ai.vad_config.stop_secs : undefined,
  };
}
