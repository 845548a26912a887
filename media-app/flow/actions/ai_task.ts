import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * ai_task: the AI works on the flow's context without audio (services.ai.task, media-app/ai/task.ts).
 * The answer lands in svc.ai_task.result (and svc.aicall.id names the session); a stop_flow tool ends
 * the flow, hanging up its call if it has one.
 */
export class AiTask extends FlowTask<z.infer<typeof later.ai_task>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.ai;
    if (!svc) return { kind: 'fail', message: 'action ai_task needs the ai subsystem, which is not available on this node' };
    const r = await svc.task(ctx, this.option);
    if (r.kind === 'fail') return r;
    ctx.vars.set('svc.ai_task.result', r.result);
    if (r.stopFlow) {
      if (ctx.call) await ctx.call.hangup('normal');
      return { kind: 'end', reason: ctx.call ? 'call_hangup' : 'stop_action' };
    }
    return NEXT;
  }
}
