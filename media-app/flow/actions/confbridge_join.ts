import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/**
 * confbridge_join: the call is in the conference's mix (confbridge_id is the conference id: each
 * conference has one confbridge) until it hangs up, is kicked, is ejected or the conference ends;
 * then the flow goes on.
 */
export class ConfbridgeJoin extends FlowTask<z.infer<typeof later.confbridge_join>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.conferences;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const call = requireCall(ctx);
    const reason = await service.join({
      customerId: ctx.customerId,
      conferenceId: this.option.confbridge_id,
      callId: call.info.id,
      activeflowId: ctx.activeflowId,
      signal: ctx.signal,
    });
    ctx.note('conference_left', { conference_id: this.option.confbridge_id, reason });
    return NEXT;
  }
}
