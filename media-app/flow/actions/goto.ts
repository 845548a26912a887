import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * Jumps to target_id while its loop_count lasts: each pass uses one, and at 0 the flow falls through
 * to the next action (voipbin). loop_count is capped by limits.maxLoopCount.
 */
export class Goto extends FlowTask<z.infer<typeof control.goto>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const loops = Math.min(this.option.loop_count ?? 0, ctx.limits.maxLoopCount);
    if (!ctx.takeLoop(this.action.id, loops)) return NEXT;
    return { kind: 'jump', target_id: this.option.target_id };
  }
}
