import type { z } from 'zod';
import type * as dialing from '../../../core/flow/options/dialing';
import { toSid } from '../../../core/twilio/sids';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Dials the destinations, bridges the first to answer and waits until that bridge ends; then the
 * flow goes on (svc.connect.status: completed, busy, no-answer or failed; svc.connect.duration: seconds;
 * svc.connect.call_id / call_sid: the destination leg; svc.connect.sip_call_id / sip_status: its INVITE's
 * Call-ID and final status). relay_reason: when the destination hung up first, the call hangs up with its reason.
 */
export class Connect extends FlowTask<z.infer<typeof dialing.connect>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const o = this.option;
    const started = ctx.clock.now();
    const r = await call.connect(
      {
        source: o.source,
        destinations: o.destinations,
        early_media: o.early_media ?? false,
        relay_reason: o.relay_reason ?? false,
        anonymous: o.anonymous ?? 'auto',
        ring_timeout: o.ring_timeout,
        duration_limit: o.duration_limit,
        record: o.record,
        hangup_on_star: o.hangup_on_star,
        hold_music: o.hold_music,
      },
      ctx.signal,
    );
    ctx.vars.set('svc.connect.status', connectStatus(r));
    // seconds talked (from the answer) when the call core measured the bridge, else since the dial
    ctx.vars.set('svc.connect.duration', String(Math.round((r.bridged_ms ?? ctx.clock.now() - started) / 1000)));
    ctx.vars.set('svc.connect.recording_id', r.recording_id ?? '');
    // the destination leg (bridged, else the first dialled), as an id and a Twilio CallSid, and its INVITE
    ctx.vars.set('svc.connect.call_id', r.leg_id ?? '');
    ctx.vars.set('svc.connect.call_sid', r.leg_id ? toSid('CA', r.leg_id) : '');
    ctx.vars.set('svc.connect.sip_call_id', r.sip_call_id ?? '');
    ctx.vars.set('svc.connect.sip_status', r.sip_status ? String(r.sip_status) : '');
    ctx.note('connect_ended', { answered: r.answered, hangup_reason: r.hangup_reason, ended_by: r.ended_by });
    if (o.relay_reason && r.ended_by === 'destination' && r.hangup_reason) {
      await call.hangup(r.hangup_reason);
      return { kind: 'end', reason: 'call_hangup' };
    }
    return NEXT;
  }
}

/** svc.connect.status, in Twilio's DialCallStatus words: completed, busy, no-answer, failed. */
export function connectStatus(r: { answered: boolean; hangup_reason: string }): string {
  if (r.answered) return 'completed';
  if (r.hangup_reason === 'busy') return 'busy';
  if (r.hangup_reason === 'noanswer' || r.hangup_reason === 'timeout') return 'no-answer';
  return 'failed';
}
