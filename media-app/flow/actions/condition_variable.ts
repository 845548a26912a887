import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { hasVariables } from '../../../core/flow';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';
import { compare, falseTarget } from './compare';
import { jsonText } from '../../../core/json-text';

export type ConditionVariableOption = z.infer<typeof control.condition_variable>;

/** True when `value <condition> option value`, compared as value_type says. */
export function variableMatches(o: ConditionVariableOption, value: string): boolean {
  switch (o.value_type ?? 'string') {
    case 'number': {
      const n = value.trim() === '' ? NaN : Number(value);
      return !Number.isNaN(n) && compare(o.condition, n, o.value_number ?? 0);
    }
    case 'length':
      return compare(o.condition, [...value].length, o.value_length ?? 0);
    default:
      return compare(o.condition, value, o.value_string ?? '');
  }
}

/**
 * Compares a variable as a string, a number or by length. Match: next action; otherwise
 * false_target_id. `variable` is a name or text with ${var} (voipbin only takes the latter).
 */
export class ConditionVariable extends FlowTask<ConditionVariableOption> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const raw = jsonText(this.rawOption.variable);
    const value = hasVariables(raw) ? this.option.variable : (ctx.vars.get(raw) ?? '');
    return variableMatches(this.option, value) ? NEXT : falseTarget(this.option.false_target_id);
  }
}
