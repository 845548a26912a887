import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/** Waits until an external continue request (ActiveflowManager.continue). */
export class Block extends FlowTask {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await ctx.waitContinue();
    return NEXT;
  }
}
