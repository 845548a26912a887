import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { abortError } from '../../kit/clock';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * ai_talk: a voice conversation with an AI (or a team) on the call: caller speech → STT → LLM
 * (streamed) → TTS, with turn-taking (docs/ai.md "Turn-taking") and the duration cap (seconds), run
 * by the AI subsystem (services.ai.talk, media-app/ai/talk.ts). Tools end it by hanging up
 * (stop_flow), connecting the caller elsewhere (connect_call) or handing back to the flow
 * (stop_service): where the flow goes then is decided here.
 */
export class AiTalk extends FlowTask<z.infer<typeof later.ai_talk>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.ai;
    if (!svc) return { kind: 'fail', message: 'action ai_talk needs the ai subsystem, which is not available on this node' };
    const call = requireCall(ctx);
    const end = await svc.talk(call, this.option, ctx.signal, ctx);
    switch (end.kind) {
      case 'failed':
        return { kind: 'fail', message: end.message };
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
