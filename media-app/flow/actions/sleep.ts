import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/** Pauses for duration ms. Runs on the clock, so it also works in activeflows without a call. */
export class Sleep extends FlowTask<z.infer<typeof media.sleep>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await ctx.clock.sleep(this.option.duration ?? 0, ctx.signal);
    return NEXT;
  }
}
