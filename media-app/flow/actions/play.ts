import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Plays each URL in turn and waits for the last one. */
export class Play extends FlowTask<z.infer<typeof media.play>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await requireCall(ctx).play(this.option.stream_urls, ctx.signal);
    return NEXT;
  }
}
