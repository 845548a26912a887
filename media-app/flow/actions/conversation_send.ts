import type { z } from 'zod';
import type * as later from '../../../core/flow/options/later';
import { messagingPort } from '../../../core/messaging/flow-port';
import { type ActionContext, FlowTask, NEXT, type Outcome } from './base';

/**
 * conversation_send: text into a conversation, sent on its channel. sync waits for the send to be
 * accepted; otherwise the flow goes on and a failure is only noted.
 */
export class ConversationSend extends FlowTask<z.infer<typeof later.conversation_send>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const port = messagingPort();
    if (!port) return { kind: 'fail', message: 'action conversation_send needs the conversation subsystem, which is not available on this node' };
    const o = this.option;
    const send = ctx.clock.track(port.sendConversation(ctx.customerId, o.conversation_id, o.text)).then((m) => {
      ctx.note('conversation_message_sent', { conversation_message_id: m.id });
      return m;
    });
    if (!o.sync) {
      ctx.background('conversation_send', send);
      return NEXT;
    }
    try {
      const m = await send;
      ctx.vars.set('svc.conversation_message.id', m.id);
      return NEXT;
    } catch (err) {
      return { kind: 'fail', message: `conversation_send: ${(err as Error).message}` };
    }
  }
}
