/**
 * Sending into a conversation goes out on the thread's channel (an SMS from our number to the
 * peer, or an email) and the channel record mirrors itself back as the conversation message.
 */
import { invalidArgument } from '../errors';
import type { ConversationMessageRow, ConversationRow } from '../repos/conversations';
import { mirroredMessages } from './threads';
import { sendSms } from '../messaging/send';
import { sendEmail, type EmailDeps } from '../email/send';
import type { MessagingDeps } from '../messaging/deps';

export async function sendToConversation(
  deps: MessagingDeps & Partial<Pick<EmailDeps, 'transport' | 'from' | 'recordingsDir'>>,
  conversation: ConversationRow,
  text: string,
): Promise<ConversationMessageRow> {
  if (text.length === 0) throw invalidArgument('text: must not be empty', [{ field: 'text', issue: 'empty' }]);
  let referenceId: string;
  if (conversation.type === 'message') {
    const m = await sendSms(deps, conversation.customer_id, { source: conversation.self, destinations: [conversation.peer], text });
    referenceId = m.id;
  } else if (conversation.type === 'email' && deps.transport && deps.from && deps.recordingsDir !== undefined) {
    const e = await sendEmail(deps as EmailDeps, conversation.customer_id, { destinations: [conversation.peer], subject: '', content: text, attachments: [] });
    referenceId = e.id;
  } else {
    throw invalidArgument(`conversations of type ${conversation.type} cannot send yet`, [{ field: 'type', issue: 'unsupported channel' }]);
  }
  const mirrored = (await mirroredMessages(deps.db, referenceId)).find((m) => m.conversation_id === conversation.id);
  if (!mirrored) throw new Error('sent message was not threaded into its conversation');
  return mirrored;
}
