import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { type ActionContext, FlowTask, type Outcome } from './base';

/** The default wait for a caller (Twilio's <Dial timeout> default, 30 s). */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * queue_dequeue (our extension, TwiML <Dial><Queue>): the call takes the oldest caller waiting in the
 * queue (by queue_id, or by name: the customer's queue of that name, made on first use), waiting up to
 * `timeout` for one; with `url` that caller first hears the document once; then the two are bridged.
 * Sets svc.dequeue.status (completed / no-answer), svc.dequeue.queue_sid, svc.dequeue.queue_time.
 * The queue subsystem (media-app/queue/dequeue.ts) does the work; without it the action fails clearly.
 */
export class QueueDequeue extends FlowTask<z.infer<typeof later.queue_dequeue>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const queues = ctx.services.queues;
    if (!queues) return { kind: 'fail', message: 'action queue_dequeue needs the queue subsystem, which is not running on this node' };
    const id = this.option.queue_id?.toLowerCase() ?? (await queues.named(ctx.customerId, this.option.name ?? ''));
    const whisper = this.option.url ? { url: this.option.url, method: this.option.method ?? 'POST' } : undefined;
    return queues.dequeue(ctx, id, { whisper, timeoutMs: this.option.timeout ?? DEFAULT_TIMEOUT_MS });
  }
}
