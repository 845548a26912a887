/**
 * The AI service's `talk` (services.ai.talk, called by the ai_talk flow action): one voice
 * conversation with an AI (or a team) on a call: caller speech → STT → LLM (streamed) → TTS with
 * turn-taking (voice.ts), or a speech-to-speech model (realtime.ts), under the duration cap. It
 * starts the AI session, builds the agent, runs it to its end and ends the session; what the flow
 * does with the end (hang up, connect, go on) is the action's.
 */
import type { z } from 'zod';
import type * as later from '../../core/flow/options/later';
import type { AiSession } from '../../core/ai/session';
import { evalPinsRepo } from '../../core/repos/eval-pins';
import { turnSettings } from '../../core/ai/turns';
import { realtimeModel } from '../../core/speech/voices';
import type { AiRow } from '../../core/repos/ais';
import { egressPolicyFor } from '../../core/net';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { CallPort } from '../flow/call-port';
import { Speaker } from '../voices';
import { assistanceOf, startSession } from './assistance';
import { flowActions, voiceSettings, type FlowSide } from './host-actions';
import { VoiceAgent, type AgentVoice, type VoiceEnd } from './voice';
import { RealtimeAgent } from './realtime';
import { linkFor } from './s2s';
import type { AiService } from './service';
import { AI_TALK_FEATURE, engineOnly, type CallEndpoint } from '../media-server/endpoint';

export type AiTalkOption = z.infer<typeof later.ai_talk>;

/** How a talk ended: the agent's end, or `failed` before it ran (the message is the flow's error as is). */
export type AiTalkEnd = VoiceEnd | { kind: 'failed'; message: string };

/** What of the flow a talk reads and writes: its variables, its trace, the AI's platform actions. */
export type AiTalkFlow = FlowSide & { readonly activeflowId: string; note(event: string, data?: Record<string, unknown>): void };

type TtsEvent = 'aicall_tts_fallback' | 'aicall_tts_failed' | 'aicall_stt_fallback' | 'aicall_stt_failed';

/** One run of the agent on a started session. */
interface Run {
  readonly svc: AiService;
  readonly call: CallPort;
  readonly ep: CallEndpoint;
  readonly session: AiSession;
  readonly flow: AiTalkFlow;
  readonly signal: AbortSignal;
  readonly maxDurationMs: number;
  /** the agent now (the stop_media tool silences it) */
  agent: VoiceAgent | RealtimeAgent | null;
}

export async function aiTalk(svc: AiService, call: CallPort, option: AiTalkOption, signal: AbortSignal, flow: AiTalkFlow): Promise<AiTalkEnd> {
  const who = assistanceOf(option);
  if (!who) return { kind: 'failed', message: 'ai_talk: assistance_id (or the deprecated ai_id) is required' };
  await call.prepareMedia(signal);
  const ep = svc.endpointOf(call.info.id);
  if (!ep) return { kind: 'failed', message: 'ai_talk: the call has no media on this node' };
  // the AI voice path needs the embedded engine's taps: on another media backend the action fails, saying so
  const refused = engineOnly(ep, AI_TALK_FEATURE);
  if (refused) return { kind: 'failed', message: refused.message };
  let run: Run | null = null;
  // the session reads the AI's row while the pin is taken (startSession says a failure of either)
  const session = await startSession(svc, flow, who, {
    action: 'ai_talk',
    referenceType: 'call',
    referenceId: call.info.id,
    speechToSpeech: true,
    versionLookup: versionOf(svc, call, flow, who, option),
    actions: {
      ...flowActions(flow),
      connect: async () => 'connecting',
      stopFlow: async () => 'hanging up',
      stopMedia: async () => {
        await run?.agent?.stopMedia();
        return 'stopped';
      },
    },
  });
  if ('failed' in session) return { kind: 'failed', message: session.failed };
  const aiVersion = session.aiVersion;
  flow.note('aicall_started', { aicall_id: session.id, ...(aiVersion !== undefined ? { ai_version: aiVersion } : {}) });
  const duration = option.duration ?? 0;
  const r: Run = { svc, call, ep, session, flow, signal, maxDurationMs: duration > 0 ? duration * 1000 : 0, agent: null };
  run = r;
  let end: VoiceEnd;
  try {
    end = realtimeModel(session.currentAi.engine_model) ? await speechToSpeech(r) : await voiceLoop(r);
  } catch (e) {
    if (signal.aborted) throw e;
    end = { kind: 'error', message: e instanceof Error ? e.message : String(e) };
  } finally {
    await session.end().catch(() => undefined);
  }
  flow.note('aicall_ended', { aicall_id: session.id, reason: end.kind });
  return end;
}

/**
 * The version of the AI this talk runs: an eval run's pin for this call (issue 56: the run compares
 * versions, so its pin wins over the flow's), else the flow's `ai_version`, else none (the latest).
 */
async function versionOf(svc: AiService, call: CallPort, flow: AiTalkFlow, who: { type: 'ai' | 'team'; id: string }, option: AiTalkOption): Promise<number | undefined> {
  const pinned = who.type === 'ai' ? await evalPinsRepo(svc.deps.db).take(flow.customerId, call.info.id, who.id) : null;
  return pinned ?? option.ai_version;
}

/** The resource event of this aicall (a voice fell back or failed); never fails the talk. */
function aicallEvent(r: Run, type: TtsEvent | 'aicall_realtime_failed', data: Record<string, unknown>): Promise<void> {
  const events = r.svc.deps.events;
  if (!events) return Promise.resolve();
  const aicall = { id: r.session.id, customer_id: r.flow.customerId, aicall_id: r.session.id, activeflow_id: r.flow.activeflowId };
  return publishResourceEvent(events, type, { ...aicall, ...data }).then(
    () => undefined,
    () => undefined,
  );
}

/** A speech-to-speech model: the call's audio to the model and back, no STT/TTS here. */
async function speechToSpeech(r: Run): Promise<VoiceEnd> {
  const { svc, session } = r;
  const ai = session.currentAi;
  const s2s = realtimeModel(ai.engine_model)!;
  const link = linkFor(s2s.target, s2s.model, ai, svc, svc.deps.egress ?? egressPolicyFor());
  const rt = new RealtimeAgent(r.ep, session, link, { maxDurationMs: r.maxDurationMs });
  r.agent = rt;
  rt.on('error', (e: Error) => svc.logger.warn({ err: e.message, aicall: session.id }, 'ai_talk speech-to-speech error'));
  rt.on('barge_in', (playedMs) => r.flow.note('aicall_barge_in', { played_ms: playedMs }));
  let end: VoiceEnd;
  try {
    await rt.start(r.signal);
    end = await rt.done;
  } catch (e) {
    if (r.signal.aborted) throw e;
    end = { kind: 'error', message: e instanceof Error ? e.message : String(e) };
  }
  // not reached, refused, or cut off by the vendor: said in an event as well as in the flow's error
  if (end.kind === 'error') await aicallEvent(r, 'aicall_realtime_failed', { engine_model: ai.engine_model, reason: end.message });
  return end;
}

/** Each AI's voice, made once (a team's members each speak with their own). */
function voicesOf(r: Run): (ai: AiRow) => AgentVoice & { type: string } {
  const voices = new Map<string, AgentVoice & { type: string }>();
  return (ai) => {
    let out = voices.get(ai.id);
    if (out) return out;
    const s = voiceSettings(ai);
    const speaker = s.cloud
      ? new Speaker(r.ep, s.cloud.primary, s.cloud.fallback, s.language, s.cloud.firstByteMs, {
          egress: r.svc.deps.egress ?? egressPolicyFor(),
          vendors: r.svc.voices,
          cacheDir: r.svc.dataDir,
          onFallback: (f) => {
            r.flow.note('aicall_tts_fallback', f);
            void aicallEvent(r, 'aicall_tts_fallback', { tts_type: f.from, fallback_tts_type: f.to, reason: f.reason });
          },
        })
      : undefined;
    out = { type: ai.tts_type, speaker, ttsProvider: s.ttsProvider, voice: s.voice };
    voices.set(ai.id, out);
    return out;
  };
}

/** The voice loop: STT, the LLM and TTS with turn-taking (voice.ts). */
async function voiceLoop(r: Run): Promise<VoiceEnd> {
  const { svc, session } = r;
  const v = voiceSettings(session.currentAi);
  const voiceOf = voicesOf(r);
  const agent = new VoiceAgent(r.ep, session, {
    ...v,
    ...voiceOf(session.currentAi),
    setDucked: (on) => r.call.duck(on),
    voiceFor: voiceOf,
    turns: turnSettings(session.currentAi),
    maxDurationMs: r.maxDurationMs,
  });
  r.agent = agent;
  agent.on('error', (e: Error) => svc.logger.warn({ err: e.message, aicall: session.id }, 'ai_talk voice error'));
  agent.on('tts_error', (e: Error) => void aicallEvent(r, 'aicall_tts_failed', { tts_type: voiceOf(session.currentAi).type, reason: e.message }));
  agent.on('stt_fallback', (f) => {
    r.flow.note('aicall_stt_fallback', { ...f });
    void aicallEvent(r, 'aicall_stt_fallback', { stt_type: f.from, fallback_stt_type: f.to, reason: f.reason });
  });
  agent.on('stt_error', (e: Error, sttType: string) => void aicallEvent(r, 'aicall_stt_failed', { stt_type: sttType, reason: e.message }));
  await agent.start(r.signal);
  return agent.done;
}
