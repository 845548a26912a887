/** The platform actions an AI's tools reach from a flow (variables, SMS), shared by ai_talk and ai_task. */
import type { AiActions } from '../../core/ai/tools';
import { messagingPort } from '../../core/messaging/flow-port';
import { SYSTEM_PREFIX } from '../../core/flow/variables';
import type { ActionContext } from '../flow/actions/base';
import { checkSttType, checkTtsType, isVendorTts, sttFallbackOf } from '../../core/speech/voices';
import type { VoiceChoice } from '../voices';
import { vadEngine } from '../../core/ai/turns';
import { openKey } from '../../core/secrets/keys';

/** What of a flow the AI's platform actions read and write. */
export type FlowSide = Pick<ActionContext, 'vars' | 'customerId'>;

export function flowActions(ctx: FlowSide): AiActions {
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

/** A voice named in an AI's parameter.tts_fallback: "type" or { tts_type, tts_voice_id, tts_key }. */
function fallbackOf(v: unknown): VoiceChoice | null {
  if (typeof v === 'string' && v) return { type: v, voice: '', key: '' };
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const str = (x: unknown) => (typeof x === 'string' ? x : '');
  return str(o.tts_type) ? { type: str(o.tts_type), voice: str(o.tts_voice_id), key: openKey(str(o.tts_key)) } : null;
}

/**
 * Voice settings of an AI: STT/TTS names as stored (a name with no adapter is an error of the
 * session, never another voice), the cloud voice and its fallback, the VAD's start time (end-of-turn waits: core/ai/turns.ts).
 */
export function voiceSettings(ai: { stt_type: string; stt_language: string; tts_type: string; tts_voice_id: string; vad_config: Record<string, number | string>; parameter: Record<string, unknown> }) {
  const phrases = Array.isArray(ai.parameter?.stt_phrases) ? (ai.parameter.stt_phrases as unknown[]).map(String) : undefined;
  const p = ai.parameter ?? {};
  // stored before the API refused it, or written around the API: said plainly, not replaced
  checkTtsType('tts_type', ai.tts_type);
  checkSttType('stt_type', ai.stt_type);
  const fallback = fallbackOf(p.tts_fallback);
  if (fallback) checkTtsType('parameter.tts_fallback', fallback.type);
  const vendor = isVendorTts(ai.tts_type);
  return {
    language: ai.stt_language || 'en-US',
    sttProvider: ai.stt_type || undefined,
    sttFallback: sttFallbackOf(p),
    sttKey: typeof p.stt_key === 'string' && p.stt_key ? openKey(p.stt_key) : undefined,
    echoCancel: p.echo_cancellation !== false,
    ttsProvider: vendor ? undefined : ai.tts_type || undefined,
    voice: vendor ? undefined : ai.tts_voice_id || undefined,
    cloud: vendor
      ? {
          primary: { type: ai.tts_type, voice: ai.tts_voice_id, key: typeof p.tts_key === 'string' ? openKey(p.tts_key) : '' },
          fallback,
          firstByteMs: typeof p.tts_first_byte_ms === 'number' ? p.tts_first_byte_ms : 2000,
        }
      : null,
    phrases,
    startSecs: typeof ai.vad_config?.start_secs === 'number' ? ai.vad_config.start_secs : undefined,
    vadEngine: vadEngine(ai),
  };
}
