import type { z } from 'zod';
import type * as vm from '../../../core/flow/options/voicemail';
import { isUuid } from '../../../core/ids';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Leaves a message in a voicemail box (an extension of the reference list; media-app/voicemail/):
 * greeting, beep, the caller's message. Sets svc.voicemail.result (left, too_short, box_full,
 * no_message) and svc.voicemail.message_id.
 */
export class Voicemail extends FlowTask<z.infer<typeof vm.voicemail>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.voicemail;
    if (!svc) return { kind: 'fail', message: 'action voicemail needs the voicemail subsystem, which is not running on this server' };
    const o = this.option;
    if (!isUuid(o.box_id)) return { kind: 'fail', message: 'voicemail: box_id is not a UUID' };
    const r = await svc.leave(ctx.customerId, requireCall(ctx), { boxId: o.box_id, greeting: o.greeting ?? 'unavailable', beep: o.beep ?? true, maxLength: o.max_length }, ctx.signal);
    if (r.kind === 'box_not_found') return { kind: 'fail', message: 'voicemail: box not found' };
    ctx.vars.set('svc.voicemail.result', r.kind);
    ctx.vars.set('svc.voicemail.message_id', r.kind === 'left' ? r.message.id : '');
    ctx.note('voicemail', { result: r.kind, ...(r.kind === 'left' ? { message_id: r.message.id } : {}) });
    return NEXT;
  }
}
