import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';
import { variableMatches } from './condition_variable';
import { falseTarget } from './compare';

/**
 * Deprecated; mapped onto condition_variable over svc.call.digits: matches when the digits reach
 * `length` (a length >= comparison) or contain `key`.
 */
export class ConditionCallDigits extends FlowTask<z.infer<typeof control.condition_call_digits>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const digits = ctx.vars.get('svc.call.digits') ?? '';
    const { length = 0, key = '' } = this.option;
    const byLength = length > 0 && variableMatches({ condition: '>=', variable: digits, value_type: 'length', value_length: length }, digits);
    const byKey = key !== '' && digits.includes(key);
    return byLength || byKey ? NEXT : falseTarget(this.option.false_target_id);
  }
}
