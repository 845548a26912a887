import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, type Outcome, requireCall } from './base';

/** Hangs up with reason (default normal); reference_id copies that call's hangup reason instead. */
export class Hangup extends FlowTask<z.infer<typeof media.hangup>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    let reason: string = this.option.reason || 'normal';
    if (!isUnset(this.option.reference_id)) {
      const copied = await call.hangupReasonOf(this.option.reference_id!);
      if (copied) reason = copied;
    }
    await call.hangup(reason);
    return { kind: 'end', reason: 'call_hangup' };
  }
}
