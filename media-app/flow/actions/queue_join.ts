import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, type Outcome } from './base';

/**
 * queue_join (by queue_id, or by name: the customer's queue of that name, made on first use): the caller waits in the queue (wait audio) until an agent is bridged and the service
 * ends, the wait_timeout passes or it is kicked; then the flow goes on with the next action.
 * With `wait_url` (our extension, TwiML <Enqueue waitUrl>) the caller hears that TwiML wait document in
 * a loop instead of the queue's wait flow; its <Leave> takes the caller out of the queue.
 * The queue subsystem (media-app/queue) does the work; without it the action fails clearly.
 */
export class QueueJoin extends FlowTask<z.infer<typeof later.queue_join>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const queues = ctx.services.queues;
    if (!queues) return { kind: 'fail', message: 'action queue_join needs the queue subsystem, which is not running on this node' };
    const id = this.option.queue_id?.toLowerCase() ?? (await queues.named(ctx.customerId, this.option.name ?? ''));
    return queues.join(ctx, id, this.option.wait_url ? { url: this.option.wait_url, method: this.option.wait_method ?? 'POST' } : undefined);
  }
}
