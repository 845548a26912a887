import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Waits for DTMF. Digits append to svc.call.digits, which may already hold a key pressed during an
 * earlier prompt; done on `length` digits, on any character of `key` (kept), or after `duration` ms.
 * With no length, key nor duration nothing could end it, so it finishes at once.
 */
export class DigitsReceive extends FlowTask<z.infer<typeof media.digits_receive>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const req = {
      duration: this.option.duration ?? 0,
      length: this.option.length ?? 0,
      key: this.option.key ?? '',
      carryover: ctx.vars.get('svc.call.digits') ?? '',
    };
    if (req.duration <= 0 && req.length <= 0 && !req.key) return NEXT;
    ctx.setCollectingDigits(true);
    try {
      const r = await call.collectDigits(req, ctx.signal);
      ctx.vars.set('svc.call.digits', r.digits);
      ctx.note('digits_received', { digits: r.digits, reason: r.reason });
    } finally {
      ctx.setCollectingDigits(false);
    }
    return NEXT;
  }
}
