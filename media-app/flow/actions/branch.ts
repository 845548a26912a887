import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { hasVariables, isUnset } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * Jumps on a variable's value: target_ids[value], else default_target_id, else the next action.
 * `variable` is a name (default svc.call.digits) or text with ${var}. A named variable is reset to
 * "" after reading (voipbin), so a later digits_receive starts afresh.
 */
export class Branch extends FlowTask<z.infer<typeof control.branch>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const raw = typeof this.rawOption.variable === 'string' && this.rawOption.variable ? this.rawOption.variable : 'svc.call.digits';
    let value: string;
    if (hasVariables(raw)) {
      value = this.option.variable ?? '';
    } else {
      value = ctx.vars.get(raw) ?? '';
      ctx.vars.set(raw, '');
    }
    const target = this.option.target_ids?.[value];
    if (target) return { kind: 'jump', target_id: target };
    if (!isUnset(this.option.default_target_id)) return { kind: 'jump', target_id: this.option.default_target_id! };
    return NEXT;
  }
}
