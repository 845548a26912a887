import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, type Outcome } from './base';

/**
 * park (our extension; docs/pbx.md "Park"): the call is parked in `slot` or its customer's first free
 * slot, hears the slot and then music on hold, and stays parked until retrieved (the flow then ends
 * with the call), or the timeout's fallback hangs it up. Every slot taken: `svc.park.slot` stays
 * empty and the flow goes on. The PBX subsystem (media-app/pbx) does the work.
 */
export class Park extends FlowTask<z.infer<typeof later.park>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const pbx = ctx.services.pbx;
    if (!pbx) return { kind: 'fail', message: 'action park needs the pbx subsystem, which is not running on this node' };
    return pbx.parkFromFlow(ctx, this.option.slot);
  }
}
