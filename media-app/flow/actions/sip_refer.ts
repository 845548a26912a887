import type { z } from 'zod';
import type { sip_refer } from '../../../core/flow/options/sip-refer';
import { abortError } from '../../kit/clock';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';
import { SubsystemMissing } from './subsystem-missing';

/** The default wait for the final NOTIFY after a 202, ms. */
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Our extension (issue 36, TwiML <Refer>): a REFER to the far end of the call's SIP leg
 * (media-app/twiml/refer.ts), answering the call first if it is not; sets svc.refer.status and
 * svc.refer.sip_code and goes on. A call with no SIP dialog (an internal call) gets failed, no code.
 */
export class SipRefer extends FlowTask<z.infer<typeof sip_refer>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const svc = ctx.services.twiml;
    if (!svc) return new SubsystemMissing(this.action, this.option, this.rawOption).exec();
    ctx.vars.set('svc.refer.status', '');
    ctx.vars.set('svc.refer.sip_code', '');
    // as every TwiML verb: an unanswered inbound call is answered first (a REFER needs the dialog)
    await call.answer(ctx.signal);
    const out = await svc.refer(call.info.id, this.option.refer_to, this.option.timeout ?? DEFAULT_TIMEOUT_MS, ctx.signal).catch((e: Error) => {
      ctx.note('sip_refer', { error: e.message });
      return { status: 'failed' as const, sipCode: '', why: 'error' };
    });
    if (!out) return { kind: 'fail', message: 'sip_refer: the call is not on this node' };
    if (ctx.signal.aborted) throw abortError(ctx.signal);
    ctx.vars.set('svc.refer.status', out.status);
    ctx.vars.set('svc.refer.sip_code', out.sipCode);
    ctx.note('sip_refer', { refer_to: this.option.refer_to, status: out.status, sip_code: out.sipCode, why: out.why });
    return NEXT;
  }
}
