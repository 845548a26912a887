import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import type { Address } from '../../../core/repos/messages';
import { messagingPort } from '../../../core/messaging/flow-port';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/** message_send: an SMS from source (an owned number) to destinations, through the messaging port (charged; 402 ends the flow with an error). */
export class MessageSend extends FlowTask<z.infer<typeof later.message_send>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const port = messagingPort();
    if (!port) return { kind: 'fail', message: 'action message_send needs the message subsystem, which is not available on this node' };
    const o = this.option;
    try {
      const m = await ctx.clock.track(
        port.sendMessage(ctx.customerId, {
          source: o.source ? toAddress(o.source) : undefined,
          destinations: o.destinations.map(toAddress),
          text: o.text,
        }),
      );
      ctx.vars.set('svc.message.id', m.id);
      ctx.note('message_sent', { message_id: m.id });
      return NEXT;
    } catch (e) {
      return { kind: 'fail', message: `message_send: ${(e as Error).message}` };
    }
  }
}

export function toAddress(a: { type?: string; target?: string; target_name?: string; name?: string; detail?: string }): Address {
  return { type: a.type ?? '', target: a.target ?? '', ...(a.target_name ? { target_name: a.target_name } : {}), ...(a.name ? { name: a.name } : {}) };
}
