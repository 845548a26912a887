/**
 * Webchat sessions as a channel like SMS or email: a session is threaded into a conversation
 * (self = the widget's webchat address, peer = the visitor's web_session address) so agents answer
 * it where they answer every other channel; the widget's session_flow_id runs once at session start
 * and its message_flow_id on every visitor message (reference: the conversation). Visitor messages
 * and replies are `webchat_message_created` events on the session's topic
 * (customer_id:<cid>:webchat_session:<session_id>) and are mirrored as conversation messages.
 */
import type { MessagingDeps } from '../messaging/deps';
import { isUnset } from '../flow';
import { conversationJson, conversationMessageJson, conversationsRepo, type ConversationRow, type ConversationType } from '../repos/conversations';
import { sessionJson, webchatMessageJson, webchatRepo, type SessionRow, type WebchatMessageRow, type WidgetRow } from './repo';

export type WebchatDeps = Pick<MessagingDeps, 'db' | 'publish' | 'startFlow' | 'log'>;

/** Conversations of webchat sessions carry this type (the conversation types of messaging are SMS/email/...). */
export const WEBCHAT_CONVERSATION_TYPE = 'webchat';

const selfOf = (widgetId: string) => ({ type: 'webchat', target: widgetId });
const peerOf = (sessionId: string) => ({ type: 'web_session', target: sessionId });

async function startFlow(deps: WebchatDeps, customerId: string, flowId: string, conversationId: string, vars: Record<string, string>): Promise<string | null> {
  if (isUnset(flowId) || !deps.startFlow) return null;
  try {
    return await deps.startFlow({ customerId, flowId, referenceType: 'conversation', referenceId: conversationId, variables: vars });
  } catch (err) {
    // The visitor's session stands without its flow; the failure is logged, not returned.
    deps.log?.warn({ err: String(err), flow_id: flowId }, 'webchat flow did not start');
    return null;
  }
}

/** Opens the one session a direct token may create: id = the token's allowed_resource_id. */
export async function openSession(deps: WebchatDeps, widget: WidgetRow, sessionId: string, input: { page_url?: string; referrer?: string }): Promise<SessionRow> {
  const { row: conv, created } = await conversationsRepo(deps.db).ensureThread(widget.customer_id, WEBCHAT_CONVERSATION_TYPE as ConversationType, selfOf(widget.id), peerOf(sessionId));
  const session = await webchatRepo(deps.db).insertSession({
    id: sessionId,
    customer_id: widget.customer_id,
    widget_id: widget.id,
    conversation_id: conv.id,
    page_url: input.page_url ?? '',
    referrer: input.referrer ?? '',
  });
  if (created) await deps.publish('conversation_created', conversationJson(conv));
  const af = await startFlow(deps, widget.customer_id, widget.session_flow_id, conv.id, {
    'svc.webchat_session.id': session.id,
    'svc.webchat_widget.id': widget.id,
  });
  if (af) await webchatRepo(deps.db).setSessionFlow(session.id, af);
  return { ...session, activeflow_id: af ?? session.activeflow_id };
}

async function mirror(deps: WebchatDeps, s: SessionRow, m: WebchatMessageRow): Promise<void> {
  const conv = await conversationsRepo(deps.db).getOwned(s.customer_id, s.conversation_id);
  if (!conv) return;
  const inbound = m.direction === 'inbound';
  const cm = await conversationsRepo(deps.db).addMessage({
    customer_id: s.customer_id,
    conversation_id: conv.id,
    direction: inbound ? 'incoming' : 'outgoing',
    status: 'done',
    reference_type: WEBCHAT_CONVERSATION_TYPE as 'message',
    reference_id: m.id,
    source: inbound ? peerOf(s.id) : selfOf(s.widget_id),
    destination: inbound ? selfOf(s.widget_id) : peerOf(s.id),
    text: m.text,
  });
  await conversationsRepo(deps.db).touch(conv.id);
  await deps.publish('conversation_message_created', conversationMessageJson(cm));
}

/**
 * A message on an active session: inbound from the visitor (starts the widget's message flow),
 * outbound from an agent (sender_id) or the API. STATE_INVALID-style refusal is the caller's: this
 * returns null when the session is no longer active.
 */
export async function postMessage(
  deps: WebchatDeps,
  s: SessionRow,
  m: { direction: 'inbound' | 'outbound'; text: string; sender_id?: string },
  widget?: WidgetRow | null,
): Promise<WebchatMessageRow | null> {
  if (s.status !== 'active') return null;
  const repo = webchatRepo(deps.db);
  const row = await repo.addMessage(s, m);
  await repo.touchSession(s.id);
  await deps.publish('webchat_message_created', webchatMessageJson(row));
  await mirror(deps, s, row);
  if (m.direction === 'inbound' && widget) {
    await startFlow(deps, s.customer_id, widget.message_flow_id, s.conversation_id, {
      'svc.webchat_session.id': s.id,
      'svc.webchat_message.id': row.id,
      'svc.webchat_message.text': row.text,
    });
  }
  return row;
}

/** Ends an active session (idempotent for the caller: null when it had already ended). */
export async function endSession(deps: WebchatDeps, s: SessionRow): Promise<SessionRow | null> {
  const ended = await webchatRepo(deps.db).endSession(s.id);
  if (ended) await deps.publish('webchat_session_ended', sessionJson(ended));
  return ended;
}

/** The webchat session behind a conversation, when the conversation is a webchat thread. */
export async function sessionOfConversation(deps: Pick<WebchatDeps, 'db'>, c: ConversationRow): Promise<SessionRow | null> {
  if ((c.type as string) !== WEBCHAT_CONVERSATION_TYPE) return null;
  return webchatRepo(deps.db).sessionByConversation(c.id);
}
