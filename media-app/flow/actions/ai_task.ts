import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { AiSession } from '../../../core/ai/session';
import { assistanceOf, startFailure } from '../../ai/assistance';
import { flowActions } from '../../ai/host-actions';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * ai_task: the AI works on the flow's context without audio (conversations, flows without a call).
 * Its input is the conversation's latest message when there is one, else the flow variables; it
 * may call tools (set_variables, send_message, stop_flow...). The answer lands in
 * svc.ai_task.result (and svc.aicall.id names the session).
 */
export class AiTask extends FlowTask<z.infer<typeof later.ai_task>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.ai;
    if (!svc) return { kind: 'fail', message: 'action ai_task needs the ai subsystem, which is not available on this node' };
    const who = assistanceOf(this.option);
    if (!who) return { kind: 'fail', message: 'ai_task: assistance_id (or the deprecated ai_id) is required' };
    let session: AiSession;
    try {
      session = await AiSession.start(svc.deps, {
        customerId: ctx.customerId,
        assistanceType: who.type,
        assistanceId: who.id,
        referenceType: ctx.referenceType === 'conversation' ? 'conversation' : 'task',
        referenceId: ctx.referenceId,
        activeflowId: ctx.activeflowId,
        variables: ctx.vars.snapshot(),
        actions: { ...flowActions(ctx), stopFlow: async () => 'the flow will stop' },
      });
    } catch (e) {
      return { kind: 'fail', message: startFailure('ai_task', e) };
    }
    ctx.vars.set('svc.aicall.id', session.id);
    const vars = ctx.vars.snapshot();
    const input = vars['svc.conversation_message.text'] || `Flow variables: ${JSON.stringify(ctx.vars.custom())}`;
    let result: string;
    try {
      result = await ctx.clock.track(session.replyText(input, ctx.signal));
    } catch (e) {
      await session.end().catch(() => undefined);
      if (ctx.signal.aborted) throw e;
      return { kind: 'fail', message: `ai_task: ${(e as Error).message}` };
    }
    await session.end().catch(() => undefined);
    ctx.vars.set('svc.ai_task.result', result);
    if (session.endRequest?.kind === 'stop_flow') {
      if (ctx.call) await ctx.call.hangup('normal');
      return { kind: 'end', reason: ctx.call ? 'call_hangup' : 'stop_action' };
    }
    return NEXT;
  }
}
