/**
 * The seam between the flow runner's message_send, email_send and conversation_send actions and
 * the messaging services. The flow runner's dependencies have no slot for it yet, so the hosting
 * process registers one port at start-up (`setMessagingPort(portFromDeps(deps))`); without it the
 * actions end the activeflow with a clear error.
 */
import { EMPTY_UUID } from '../ids';
import { invalidArgument } from '../errors';
import type { Address } from '../repos/messages';
import { conversationsRepo } from '../repos/conversations';
import { sendSms } from './send';
import { sendEmail, type EmailDeps } from '../email/send';
import { sendToConversation } from '../conversations/send';
import { ApiError } from '../errors';

export interface MessagingPort {
  sendMessage(customerId: string, input: { source?: Address; destinations: Address[]; text: string }): Promise<{ id: string }>;
  sendEmail(
    customerId: string,
    input: { destinations: Address[]; subject: string; content: string; attachments: { reference_type?: string; reference_id?: string }[]; activeflowId: string },
  ): Promise<{ id: string }>;
  sendConversation(customerId: string, conversationId: string, text: string): Promise<{ id: string }>;
}

let current: MessagingPort | null = null;

export function setMessagingPort(port: MessagingPort | null): void {
  current = port;
}

export function messagingPort(): MessagingPort | null {
  return current;
}

export function portFromDeps(deps: EmailDeps): MessagingPort {
  return {
    async sendMessage(customerId, input) {
      if (!input.source) throw invalidArgument('message_send: source is required');
      return sendSms(deps, customerId, { source: input.source, destinations: input.destinations, text: input.text });
    },
    async sendEmail(customerId, input) {
      return sendEmail(deps, customerId, {
        destinations: input.destinations,
        subject: input.subject,
        content: input.content,
        attachments: input.attachments.filter((a) => a.reference_id && a.reference_id !== EMPTY_UUID),
        activeflowId: input.activeflowId,
      });
    },
    async sendConversation(customerId, conversationId, text) {
      const c = await conversationsRepo(deps.db).getOwned(customerId, conversationId);
      if (!c) throw new ApiError('CONVERSATION_NOT_FOUND', 'conversation not found');
      return sendToConversation(deps, c, text);
    },
  };
}
