import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { AiSession } from '../../../core/ai/session';
import { turnSettings } from '../../../core/ai/turns';
import { abortError } from '../../kit/clock';
import { assistanceOf, startFailure } from '../../ai/assistance';
import { flowActions, voiceSettings } from '../../ai/host-actions';
import { VoiceAgent, type AgentVoice, type VoiceEnd } from '../../ai/voice';
import { RealtimeAgent } from '../../ai/realtime';
import { linkFor } from '../../ai/s2s';
import { realtimeModel } from '../../../core/speech/voices';
import type { AiRow } from '../../../core/repos/ais';
import { Speaker } from '../../voices';
import { egressPolicyFor } from '../../../core/net';
import { publishResourceEvent } from '../../../core/events/catalogue';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * ai_talk: a voice conversation with an AI (or a team) on the call: caller speech → STT → LLM
 * (streamed) → TTS, with turn-taking (docs/ai.md "Turn-taking") and the duration cap (seconds). Tools end it
 * by hanging up (stop_flow), connecting the caller elsewhere (connect_call) or handing back to the
 * flow (stop_service).
 */
export class AiTalk extends FlowTask<z.infer<typeof later.ai_talk>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.ai;
    if (!svc) return { kind: 'fail', message: 'action ai_talk needs the ai subsystem, which is not available on this node' };
    const who = assistanceOf(this.option);
    if (!who) return { kind: 'fail', message: 'ai_talk: assistance_id (or the deprecated ai_id) is required' };
    const call = requireCall(ctx);
    await call.prepareMedia(ctx.signal);
    const ep = svc.endpointOf(call.info.id);
    if (!ep) return { kind: 'fail', message: 'ai_talk: the call has no media on this node' };
    let agent: VoiceAgent | RealtimeAgent | null = null;
    let session: AiSession;
    try {
      session = await AiSession.start(svc.deps, {
        customerId: ctx.customerId,
        assistanceType: who.type,
        assistanceId: who.id,
        referenceType: 'call',
        referenceId: call.info.id,
        activeflowId: ctx.activeflowId,
        variables: ctx.vars.snapshot(),
        speechToSpeech: true,
        actions: {
          ...flowActions(ctx),
          connect: async () => 'connecting',
          stopFlow: async () => 'hanging up',
          stopMedia: async () => {
            await agent?.stopMedia();
            return 'stopped';
          },
        },
      });
    } catch (e) {
      return { kind: 'fail', message: startFailure('ai_talk', e) };
    }
    ctx.vars.set('svc.aicall.id', session.id);
    ctx.note('aicall_started', { aicall_id: session.id });
    let end: VoiceEnd;
    try {
      const duration = this.option.duration ?? 0;
      const aicall = { id: session.id, customer_id: ctx.customerId, aicall_id: session.id, activeflow_id: ctx.activeflowId };
      const s2s = realtimeModel(session.currentAi.engine_model);
      if (s2s) {
        // a speech-to-speech model: the call's audio to the model and back, no STT/TTS here
        const ai = session.currentAi;
        const link = linkFor(s2s.target, s2s.model, ai, svc, svc.deps.egress ?? egressPolicyFor());
        const rt = new RealtimeAgent(ep, session, link, { maxDurationMs: duration > 0 ? duration * 1000 : 0 });
        agent = rt;
        rt.on('error', (e: Error) => svc.logger.warn({ err: e.message, aicall: session.id }, 'ai_talk speech-to-speech error'));
        rt.on('barge_in', (playedMs) => ctx.note('aicall_barge_in', { played_ms: playedMs }));
        try {
          await rt.start(ctx.signal);
          end = await rt.done;
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          end = { kind: 'error', message: e instanceof Error ? e.message : String(e) };
        }
        // not reached, refused, or cut off by the vendor: said in an event as well as in the flow's error
        if (end.kind === 'error' && svc.deps.events) {
          await publishResourceEvent(svc.deps.events, 'aicall_realtime_failed', { ...aicall, engine_model: ai.engine_model, reason: end.message }).catch(() => undefined);
        }
      } else {
        const v = voiceSettings(session.currentAi);
        const event = (type: 'aicall_tts_fallback' | 'aicall_tts_failed' | 'aicall_stt_fallback' | 'aicall_stt_failed', data: Record<string, unknown>) =>
          svc.deps.events ? void publishResourceEvent(svc.deps.events, type, { ...aicall, ...data }).catch(() => undefined) : undefined;
        // each AI's voice, made once (a team's members each speak with their own)
        const voices = new Map<string, AgentVoice & { type: string }>();
        const voiceOf = (ai: AiRow): AgentVoice & { type: string } => {
          let out = voices.get(ai.id);
          if (out) return out;
          const s = voiceSettings(ai);
          const speaker = s.cloud
            ? new Speaker(ep, s.cloud.primary, s.cloud.fallback, s.language, s.cloud.firstByteMs, {
                egress: svc.deps.egress ?? egressPolicyFor(),
                vendors: svc.voices,
                cacheDir: svc.dataDir,
                onFallback: (f) => {
                  ctx.note('aicall_tts_fallback', f);
                  event('aicall_tts_fallback', { tts_type: f.from, fallback_tts_type: f.to, reason: f.reason });
                },
              })
            : undefined;
          out = { type: ai.tts_type, speaker, ttsProvider: s.ttsProvider, voice: s.voice };
          voices.set(ai.id, out);
          return out;
        };
        const first = voiceOf(session.currentAi);
        agent = new VoiceAgent(ep, session, {
          ...v,
          ...first,
          setDucked: (on) => call.duck(on),
          voiceFor: voiceOf,
          turns: turnSettings(session.currentAi),
          maxDurationMs: duration > 0 ? duration * 1000 : 0,
        });
        agent.on('error', (e: Error) => svc.logger.warn({ err: e.message, aicall: session.id }, 'ai_talk voice error'));
        agent.on('tts_error', (e: Error) => event('aicall_tts_failed', { tts_type: voiceOf(session.currentAi).type, reason: e.message }));
        agent.on('stt_fallback', (f) => {
          ctx.note('aicall_stt_fallback', { ...f });
          event('aicall_stt_fallback', { stt_type: f.from, fallback_stt_type: f.to, reason: f.reason });
        });
        agent.on('stt_error', (e: Error, sttType: string) => event('aicall_stt_failed', { stt_type: sttType, reason: e.message }));
        await agent.start(ctx.signal);
        end = await agent.done;
      }
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      end = { kind: 'error', message: e instanceof Error ? e.message : String(e) };
    } finally {
      await session.end().catch(() => undefined);
    }
    ctx.note('aicall_ended', { aicall_id: session.id, reason: end.kind });
    switch (end.kind) {
      case 'stop_flow':
        await call.hangup('normal');
        return { kind: 'end', reason: 'call_hangup' };
      case 'hangup':
        return { kind: 'end', reason: 'call_hangup' };
      case 'aborted':
        throw abortError(ctx.signal);
      case 'error':
        return { kind: 'fail', message: `ai_talk: ${end.message}` };
      case 'connect': {
        const r = await call.connect({ destinations: end.destinations, early_media: false, relay_reason: false, anonymous: 'no' }, ctx.signal);
        ctx.note('aicall_connected', { answered: r.answered });
        return NEXT;
      }
      default:
        return NEXT;
    }
  }
}
