import type { z } from 'zod';
import type * as dialing from '../../../core/flow/options/dialing';
import { EMPTY_UUID, isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * Starts independent outgoing call(s) running flow_id, or the inline actions, and goes on without
 * waiting. chained: the new calls hang up with this one. early_execution: their flow runs at ringing.
 */
export class Call extends FlowTask<z.infer<typeof dialing.call>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    if (!ctx.originator) return { kind: 'fail', message: 'action call: no originator is configured for this activeflow' };
    const o = this.option;
    const chained = o.chained ?? false;
    const res = await ctx.originator.originate({
      source: o.source,
      destinations: o.destinations,
      flow_id: isUnset(o.flow_id) ? EMPTY_UUID : o.flow_id!,
      // Inline actions keep their own ${var}: the new call's activeflow fills them in.
      actions: Array.isArray(this.rawOption.actions) ? this.rawOption.actions : [],
      chained,
      early_execution: o.early_execution ?? false,
      anonymous: o.anonymous ?? 'auto',
      master_call_id: chained && ctx.call ? ctx.call.info.id : EMPTY_UUID,
      activeflow_id: ctx.activeflowId,
    });
    ctx.note('call_created', { call_ids: res.call_ids });
    return NEXT;
  }
}
