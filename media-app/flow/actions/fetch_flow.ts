import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { type ActionContext, FlowTask, type Outcome } from './base';

/** Runs another flow's actions next, then resumes after this action. */
export class FetchFlow extends FlowTask<z.infer<typeof control.fetch_flow>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const flow = await ctx.flows.get(this.option.flow_id, ctx.customerId);
    if (!flow) return { kind: 'fail', message: `fetch_flow: flow ${this.option.flow_id} not found` };
    return { kind: 'push', actions: flow.actions };
  }
}
