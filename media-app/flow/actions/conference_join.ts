import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { EMPTY_UUID, isUnset, type Action } from '../../../core/flow';
import { newId } from '../../../core/ids';
import { type ActionContext, FlowTask, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/**
 * conference_join: the call becomes a joining participant, then the flow forks (voipbin): the
 * conference's pre_flow, confbridge_join (in the mix until the call leaves), its post_flow; then the
 * actions after this one.
 */
export class ConferenceJoin extends FlowTask<z.infer<typeof later.conference_join>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.conferences;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const call = requireCall(ctx);
    const conferenceId = this.option.conference_id;
    const entered = await service.enter({ customerId: ctx.customerId, conferenceId, callId: call.info.id, activeflowId: ctx.activeflowId });
    ctx.note('conference_joining', { conference_id: conferenceId, conferencecall_id: entered.conferencecall.id });
    const actions: Action[] = [];
    for (const flowId of [entered.pre_flow_id, '', entered.post_flow_id]) {
      if (flowId === '') {
        actions.push({ id: newId(), next_id: EMPTY_UUID, type: 'confbridge_join', option: { confbridge_id: conferenceId } });
        continue;
      }
      if (isUnset(flowId)) continue;
      const flow = await ctx.flows.get(flowId, ctx.customerId);
      if (flow) actions.push(...flow.actions);
      else ctx.note('conference_flow_missing', { flow_id: flowId });
    }
    return { kind: 'push', actions };
  }
}
