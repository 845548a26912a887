import type { z } from 'zod';
import type * as vm from '../../../core/flow/options/voicemail';
import { isUnset } from '../../../core/flow';
import { isUuid } from '../../../core/ids';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * The voice menu of a voicemail box (an extension of the reference list; media-app/voicemail/menu.ts).
 * Sets svc.voicemail.result (exit, timeout, login_failed: the call is hung up after 3 wrong logins;
 * locked: hung up, the caller is locked out by wrong PINs across calls, core/voicemail/pin-lockout.ts).
 */
export class VoicemailMain extends FlowTask<z.infer<typeof vm.voicemail_main>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const svc = ctx.services.voicemail;
    if (!svc) return { kind: 'fail', message: 'action voicemail_main needs the voicemail subsystem, which is not running on this server' };
    const o = this.option;
    const boxId = isUnset(o.box_id) ? '' : o.box_id!;
    if (boxId && !isUuid(boxId)) return { kind: 'fail', message: 'voicemail_main: box_id is not a UUID' };
    ctx.setCollectingDigits(true);
    try {
      const r = await svc.menu(ctx.customerId, requireCall(ctx), { boxId, skipPin: o.skip_pin ?? false }, ctx.signal);
      if (r === 'box_not_found') return { kind: 'fail', message: 'voicemail_main: box not found' };
      ctx.vars.set('svc.voicemail.result', r);
      ctx.note('voicemail_main', { result: r });
      return NEXT;
    } finally {
      ctx.setCollectingDigits(false);
    }
  }
}
