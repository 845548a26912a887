import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * case_create: opens a contact case on the activeflow's reference (there is no reference_id option).
 * sync waits for the case and sets svc.contact_case.id; otherwise the flow goes on and a failure is
 * only noted. Without the workspace subsystem the activeflow fails with a clear message.
 */
export class CaseCreate extends FlowTask<z.infer<typeof later.case_create>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const cases = ctx.services.cases;
    if (!cases) return { kind: 'fail', message: 'action case_create needs the workspace subsystem, which is not available on this node' };
    const o = this.option;
    const open = cases
      .open({
        customerId: ctx.customerId,
        activeflowId: ctx.activeflowId,
        referenceType: ctx.referenceType,
        referenceId: ctx.referenceId,
        name: o.name,
        detail: o.detail,
        note: o.note,
      })
      .then((c) => {
        ctx.note('contact_case_created', { contact_case_id: c.id });
        return c;
      });
    if (!o.sync) {
      ctx.background('case_create', open);
      return NEXT;
    }
    try {
      const c = await ctx.clock.track(open);
      ctx.vars.set('svc.contact_case.id', c.id);
      return NEXT;
    } catch (err) {
      return { kind: 'fail', message: `case_create: ${(err as Error).message}` };
    }
  }
}
