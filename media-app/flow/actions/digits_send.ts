import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** Sends DTMF; completes after duration·n + interval·(n-1) ms. */
export class DigitsSend extends FlowTask<z.infer<typeof media.digits_send>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const o = this.option;
    if (o.digits === '') return NEXT;
    await requireCall(ctx).sendDigits({ digits: o.digits, duration: o.duration ?? 250, interval: o.interval ?? 100 }, ctx.signal);
    return NEXT;
  }
}
