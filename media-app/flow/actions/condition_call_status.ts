import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';
import { variableMatches } from './condition_variable';
import { falseTarget } from './compare';

/** Deprecated; mapped onto condition_variable: svc.call.status == status. */
export class ConditionCallStatus extends FlowTask<z.infer<typeof control.condition_call_status>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const status = ctx.call?.info.status ?? ctx.vars.get('svc.call.status') ?? '';
    const ok = variableMatches({ condition: '==', variable: status, value_type: 'string', value_string: this.option.status }, status);
    return ok ? NEXT : falseTarget(this.option.false_target_id);
  }
}
