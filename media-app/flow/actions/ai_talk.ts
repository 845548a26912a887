import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { AiSession } from '../../../core/ai/session';
import { abortError } from '../clock';
import { assistanceOf, startFailure } from '../../ai/assistance';
import { flowActions, voiceSettings } from '../../ai/host-actions';
import { VoiceAgent } from '../../ai/voice';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * ai_talk: a voice conversation with an AI (or a team) on the call: caller speech → STT → LLM
 * (streamed) → TTS, with barge-in, VAD turn detection and the duration cap (seconds). Tools end it
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
    let agent: VoiceAgent | null = null;
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
    const v = voiceSettings(session.currentAi);
    const duration = this.option.duration ?? 0;
    agent = new VoiceAgent(ep, session, { ...v, maxDurationMs: duration > 0 ? duration * 1000 : 0 });
    agent.on('error', (e: Error) => svc.logger.warn({ err: e.message, aicall: session.id }, 'ai_talk voice error'));
    let end;
    try {
      await agent.start(ctx.signal);
      end = await agent.done;
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
