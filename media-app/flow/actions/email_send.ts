import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { messagingPort } from '../../../core/messaging/flow-port';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';
import { toAddress } from './message_send';

/** email_send: an email (attachments: recordings) through the messaging port (charged; 402 ends the flow with an error). */
export class EmailSend extends FlowTask<z.infer<typeof later.email_send>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const port = messagingPort();
    if (!port) return { kind: 'fail', message: 'action email_send needs the email subsystem, which is not available on this node' };
    const o = this.option;
    try {
      const e = await ctx.clock.track(
        port.sendEmail(ctx.customerId, {
          destinations: o.destinations.map(toAddress),
          subject: o.subject ?? '',
          content: o.content ?? '',
          attachments: o.attachments ?? [],
          activeflowId: ctx.activeflowId,
        }),
      );
      ctx.vars.set('svc.email.id', e.id);
      ctx.note('email_sent', { email_id: e.id });
      return NEXT;
    } catch (err) {
      return { kind: 'fail', message: `email_send: ${(err as Error).message}` };
    }
  }
}
