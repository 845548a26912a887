import type { z } from 'zod';
import type * as control from '../../../core/flow/options/control';
import { isAbortError } from '../../kit/clock';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * Sends data (with ${var} filled in) to uri. sync: waits for the answer; async: goes on at once.
 * A failed delivery is noted but does not end the flow; the response is not read (voipbin).
 */
export class WebhookSend extends FlowTask<z.infer<typeof control.webhook_send>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const o = this.option;
    const method = o.method ?? 'POST';
    const send = ctx.http
      .request({
        method,
        url: o.uri,
        headers: { 'content-type': o.data_type || 'application/json' },
        body: method === 'GET' ? undefined : (o.data ?? ''),
        timeoutMs: ctx.limits.httpTimeoutMs,
        signal: o.sync ? ctx.signal : undefined,
      })
      .then((res) => ctx.note('webhook_sent', { uri: o.uri, status: res.status, sync: !!o.sync }));
    if (!o.sync) {
      ctx.background('webhook_send', send);
      return NEXT;
    }
    try {
      await send;
    } catch (e) {
      if (isAbortError(e) && ctx.signal.aborted) throw e;
      ctx.note('webhook_failed', { uri: o.uri, error: (e as Error).message });
    }
    return NEXT;
  }
}
