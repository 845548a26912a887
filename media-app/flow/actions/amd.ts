import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/**
 * Answering-machine detection. The result lands in svc.call.amd_result (human, machine, notsure).
 * machine_handle "hangup" hangs up (reason amd) on a machine; "continue" (default) goes on.
 * async: the flow goes on at once and the hangup, if any, happens when detection ends.
 */
export class Amd extends FlowTask<z.infer<typeof media.amd>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx);
    const hangupOnMachine = this.option.machine_handle === 'hangup';
    const detect = async (): Promise<boolean> => {
      const { result } = await call.amd(ctx.signal);
      ctx.vars.set('svc.call.amd_result', result);
      ctx.note('amd_result', { result });
      if (result === 'machine' && hangupOnMachine) {
        await call.hangup('amd');
        return true;
      }
      return false;
    };
    if (this.option.async) {
      ctx.background('amd', detect());
      return NEXT;
    }
    return (await detect()) ? { kind: 'end', reason: 'call_hangup' } : NEXT;
  }
}
