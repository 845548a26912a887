import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/** Sets a custom variable; the value may use ${var}. */
export class VariableSet extends FlowTask<z.infer<typeof control.variable_set>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    ctx.vars.set(this.option.key, this.option.value ?? '');
    return NEXT;
  }
}
