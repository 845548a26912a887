/**
 * Which agents an event concerns: the agent itself (agent_*), the owner of a call or conversation
 * (and an agent address of a call), the owner of the conversation a conversation message or a
 * webchat session belongs to, the owner of a contact case, and the participants of a talk chat.
 * The agent socket delivers an event only to these agents.
 */
import type { Knex } from 'knex';
import type { PlatformEvent } from '../../core/events/bus';
import { topicResourceOf } from '../../core/events/catalogue';
import { EMPTY_UUID } from '../../core/ids';
import { conversationOwnerOf } from '../../core/repos/conversations';
import { webchatSessionConversation } from '../../core/webchat/repo';
import { chatAgentParticipants } from '../../core/chats/repo';

const str = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : '');

function agentAddress(a: unknown): string {
  return a && typeof a === 'object' && (a as { type?: unknown }).type === 'agent' ? str((a as { target?: unknown }).target) : '';
}

async function conversationOwner(db: Knex, conversationId: string): Promise<string> {
  if (!conversationId) return '';
  return conversationOwnerOf(db, conversationId);
}

export async function audienceOf(db: Knex, e: PlatformEvent): Promise<Set<string>> {
  const out = new Set<string>();
  const add = (id: string) => {
    if (id && id !== EMPTY_UUID) out.add(id.toLowerCase());
  };
  const d = e.data;
  const resource = topicResourceOf(e.event_type);
  if (resource === 'agent') add(e.resource_id);
  if (d.owner_type === undefined || d.owner_type === 'agent') add(str(d.owner_id));
  if (resource === 'call') {
    add(agentAddress(d.source));
    add(agentAddress(d.destination));
  }
  if (e.event_type.startsWith('conversation_message_')) add(await conversationOwner(db, str(d.conversation_id)));
  if (resource === 'webchat_session') {
    const sessionId = e.event_type === 'webchat_session_ended' ? str(d.id) : str(d.session_id);
    const conversationId = await webchatSessionConversation(db, sessionId);
    if (conversationId !== null) add(await conversationOwner(db, conversationId));
  }
  if (resource === 'chat') {
    for (const id of await chatAgentParticipants(db, e.resource_id)) add(id);
  }
  return out;
}

/** The ids a four-part topic may name for an event: its topic id, and the conversation of a conversation message. */
export function topicIdsOf(e: PlatformEvent): string[] {
  const ids = [e.resource_id.toLowerCase()];
  const conv = str(e.data.conversation_id);
  if (conv) ids.push(conv);
  return ids;
}
