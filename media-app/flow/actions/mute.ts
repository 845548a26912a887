import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Mutes the call (both directions unless told). voipbin accepts the type but does nothing with it. */
export class Mute extends FlowTask<z.infer<typeof media.mute>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    await requireCall(ctx).mute(this.option.direction ?? 'both');
    return NEXT;
  }
}
