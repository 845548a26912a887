import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { EMPTY_UUID, isUnset, type Action } from '../../../core/flow';
import { newId } from '../../../core/ids';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/**
 * conference_join: the call becomes a joining participant, then the flow forks (voipbin): the
 * conference's pre_flow, confbridge_join (in the mix until the call leaves), its post_flow; then the
 * actions after this one. By `name`: the customer's live conference of that name, made on the first
 * join. A full room (max_participants) is noted (conference_full, Twilio's 16020) and the flow goes on.
 * `start_on_enter: false` and its `wait_url`/`wait_method` go to the confbridge_join (it waits there).
 * svc.conference.status: completed once joined, failed when the room was full (TwiML's DialCallStatus).
 */
export class ConferenceJoin extends FlowTask<z.infer<typeof later.conference_join>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const service = ctx.services.conferences;
    if (!service) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    const call = requireCall(ctx);
    const o = this.option;
    const room = o.conference_id !== undefined ? { conferenceId: o.conference_id } : { name: o.name ?? '', maxParticipants: o.max_participants };
    const r = await service.enterRoom(room, {
      customerId: ctx.customerId,
      callId: call.info.id,
      activeflowId: ctx.activeflowId,
      endOnExit: o.end_on_exit,
      label: o.label,
      startOnEnter: o.start_on_enter,
      statusCallback: o.status_callback,
      beep: o.beep,
      coachCallId: o.coach_call_id,
      record: o.record,
    });
    if (r.kind === 'full') {
      ctx.note('conference_full', { conference_id: r.conferenceId, code: 16020 });
      ctx.vars.set('svc.conference.status', 'failed');
      return NEXT;
    }
    const { conferenceId, entered } = r;
    // joined muted: the call's own mute (direction in: the room does not hear it), as Participants Muted sets and clears it
    if (o.muted) await call.mute('in');
    ctx.vars.set('svc.conference.status', 'completed');
    ctx.note('conference_joining', { conference_id: conferenceId, conferencecall_id: entered.conferencecall.id });
    const actions: Action[] = [];
    for (const flowId of [entered.pre_flow_id, '', entered.post_flow_id]) {
      if (flowId === '') {
        const wait =
          o.start_on_enter === false ? { start_on_enter: false, ...(o.wait_url !== undefined ? { wait_url: o.wait_url } : {}), ...(o.wait_method ? { wait_method: o.wait_method } : {}) } : {};
        actions.push({ id: newId(), next_id: EMPTY_UUID, type: 'confbridge_join', option: { confbridge_id: conferenceId, ...wait } });
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
