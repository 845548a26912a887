/**
 * /service_agents/talk_*: chats between agents. An agent sees the chats it is in and the public
 * channels (type talk), which any agent of the customer may join; direct chats have exactly two
 * members and take no more. Changes are chat* events on the chat's topic.
 */
import { z } from 'zod';
import { defineRoute, idParams, orMissing, uuid, type AnyRoute } from '../route';
import { ApiError, alreadyExists } from '../../core/errors';
import { CHAT_TYPES, chatJson, chatMessageJson, chatsRepo, participantJson, type ChatRow } from '../../core/chats/repo';
import { messagingDeps } from '../messaging/deps';
import { legacyTime, listOf, uuidOut } from './schemas';
import { agentScope, pageQuery, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import type { AppContext } from '../context';

const chatSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.enum(CHAT_TYPES),
  name: z.string(),
  detail: z.string(),
  member_count: z.number().int(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});
const participantSchema = z.object({ id: uuidOut(), customer_id: uuidOut(), owner_type: z.string(), owner_id: uuidOut(), chat_id: uuidOut(), tm_joined: legacyTime() });
const reactionSchema = z.object({ emoji: z.string(), owner_type: z.string(), owner_id: uuidOut(), tm_create: z.string() });
const messageSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  owner_type: z.string(),
  owner_id: uuidOut(),
  chat_id: uuidOut(),
  parent_id: uuidOut(),
  type: z.enum(['normal', 'system']),
  text: z.string(),
  medias: z.array(z.unknown()),
  metadata: z.object({ reactions: z.array(reactionSchema) }),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});
const member = z.strictObject({ owner_type: z.enum(['agent']), owner_id: uuid() });

const chatNotFound = () => new ApiError('RESOURCE_NOT_FOUND', 'talk chat not found');
const messageNotFound = () => new ApiError('MESSAGE_NOT_FOUND', 'talk message not found');

/** A chat the agent is in; public channels also when `channelsToo`. */
async function reachable(ctx: AppContext, s: AgentScope, id: string, channelsToo = false): Promise<ChatRow> {
  const repo = chatsRepo(ctx.db);
  const c = await repo.get(s.customerId, id.toLowerCase());
  if (!c) throw chatNotFound();
  if (channelsToo && c.type === 'talk') return c;
  if (!(await repo.participant(c.id, 'agent', s.agentId))) throw chatNotFound();
  return c;
}

async function checkAgents(ctx: AppContext, s: AgentScope, ids: string[]): Promise<void> {
  for (const id of ids) {
    if (!(await ctx.repos.agents.get(id, { customerId: s.customerId }))) {
      throw new ApiError('INVALID_ARGUMENT', `participants: ${id} is not an agent of this customer`, { details: [{ field: 'owner_id', issue: 'not an agent of this customer' }] });
    }
  }
}

/** Publishes the change and answers with what was published: every write here ends this way. */
async function published<T extends { id: string; customer_id: string }>(ctx: AppContext, type: Parameters<ReturnType<typeof messagingDeps>['publish']>[0], json: T): Promise<T> {
  await messagingDeps(ctx).publish(type, json);
  return json;
}

/** Makes the agent a member of the chat and publishes chatparticipant_added; 409 when it already is one. */
async function addMember(ctx: AppContext, c: ChatRow, agentId: string) {
  const p = await chatsRepo(ctx.db).addParticipant(c, 'agent', agentId);
  if (!p) throw alreadyExists('already a member of this chat');
  return published(ctx, 'chatparticipant_added', participantJson(p));
}

const defs: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_channels',
    tag: 'Service Agent',
    summary: 'Public talk channels of the customer',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(chatSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await chatsRepo(ctx.db).listChannels(agentScope(auth).customerId, page);
      return { result: p.result.map(chatJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_chats',
    tag: 'Service Agent',
    summary: 'Chats the agent is in',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(chatSchema),
    handler: async ({ ctx, auth, page }) => {
      const s = agentScope(auth);
      const p = await chatsRepo(ctx.db).listFor(s.customerId, s.agentId, page);
      return { result: p.result.map(chatJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/talk_chats',
    tag: 'Service Agent',
    summary: 'Create a chat (the caller is a member)',
    permission: 'agent',
    description: 'direct: exactly one other agent in participants; group: invited agents; talk: a public channel.',
    body: z.object({ type: z.enum(CHAT_TYPES), name: z.string().max(255).optional(), detail: z.string().max(1024).optional(), participants: z.array(member).max(100).optional() }),
    response: chatSchema,
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      const others = [...new Set((body.participants ?? []).map((p) => p.owner_id.toLowerCase()).filter((id) => id !== s.agentId))];
      if (body.type === 'direct' && others.length !== 1) {
        throw new ApiError('INVALID_ARGUMENT', 'participants: a direct chat has exactly one other agent', { details: [{ field: 'participants', issue: 'exactly one other agent' }] });
      }
      await checkAgents(ctx, s, others);
      const c = await chatsRepo(ctx.db).create(
        s.customerId,
        body,
        [s.agentId, ...others].map((id) => ({ owner_type: 'agent', owner_id: id })),
      );
      return published(ctx, 'chat_created', chatJson(c));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_chats/:id',
    tag: 'Service Agent',
    summary: 'A chat the agent is in, or a public channel',
    permission: 'agent',
    params: idParams,
    response: chatSchema,
    handler: async ({ ctx, auth, params }) => chatJson(await reachable(ctx, agentScope(auth), params.id, true)),
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/talk_chats/:id',
    tag: 'Service Agent',
    summary: 'Rename a chat',
    permission: 'agent',
    params: idParams,
    body: z.object({ name: z.string().max(255).optional(), detail: z.string().max(1024).optional() }),
    response: chatSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await reachable(ctx, s, params.id);
      await chatsRepo(ctx.db).update(c.id, body);
      return published(ctx, 'chat_updated', chatJson((await chatsRepo(ctx.db).get(s.customerId, c.id))!));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/talk_chats/:id',
    tag: 'Service Agent',
    summary: 'Delete a chat',
    permission: 'agent',
    params: idParams,
    response: chatSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await reachable(ctx, agentScope(auth), params.id);
      await chatsRepo(ctx.db).softDelete(c.id);
      return published(ctx, 'chat_deleted', { ...chatJson(c), tm_delete: chatJson({ ...c, tm_delete: new Date() }).tm_delete });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/talk_chats/:id/join',
    tag: 'Service Agent',
    summary: 'Join a public channel (409 when already a member)',
    permission: 'agent',
    params: idParams,
    response: participantSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const c = await reachable(ctx, s, params.id, true);
      if (c.type !== 'talk') throw alreadyExists('already a member of this chat');
      return addMember(ctx, c, s.agentId);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_chats/:id/participants',
    tag: 'Service Agent',
    summary: 'Members of a chat',
    permission: 'agent',
    params: idParams,
    response: z.array(participantSchema),
    handler: async ({ ctx, auth, params }) => (await chatsRepo(ctx.db).participants((await reachable(ctx, agentScope(auth), params.id, true)).id)).map(participantJson),
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/talk_chats/:id/participants',
    tag: 'Service Agent',
    summary: 'Add an agent to a group chat or channel',
    permission: 'agent',
    params: idParams,
    body: member,
    response: participantSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await reachable(ctx, s, params.id);
      if (c.type === 'direct') throw new ApiError('STATE_INVALID', 'a direct chat takes no more members');
      const id = body.owner_id.toLowerCase();
      await checkAgents(ctx, s, [id]);
      return addMember(ctx, c, id);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/talk_chats/:id/participants/:participant_id',
    tag: 'Service Agent',
    summary: 'Remove a member (or leave)',
    permission: 'agent',
    params: z.object({ id: uuid(), participant_id: uuid() }),
    response: participantSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await reachable(ctx, agentScope(auth), params.id);
      const p = await chatsRepo(ctx.db).removeParticipant(c.id, params.participant_id.toLowerCase());
      if (!p) throw new ApiError('RESOURCE_NOT_FOUND', 'participant not found');
      return published(ctx, 'chatparticipant_removed', participantJson(p));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_messages',
    tag: 'Service Agent',
    summary: 'Messages of a chat',
    permission: 'agent',
    paginated: true,
    query: z.object({ chat_id: uuid(), ...pageQuery }),
    response: listOf(messageSchema),
    handler: async ({ ctx, auth, query, page }) => {
      const c = await reachable(ctx, agentScope(auth), query.chat_id, true);
      const p = await chatsRepo(ctx.db).listMessages(c.id, page);
      return { result: p.result.map(chatMessageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/talk_messages',
    tag: 'Service Agent',
    summary: 'Post a message in a chat the agent is in',
    permission: 'agent',
    body: z.object({
      chat_id: uuid(),
      parent_id: uuid().optional(),
      type: z.enum(['normal']).optional(),
      text: z.string().min(1).max(8192),
      medias: z.array(z.unknown()).max(0, 'medias are not supported yet').optional(),
    }),
    response: messageSchema,
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      const c = await reachable(ctx, s, body.chat_id);
      if (body.parent_id) {
        const parent = await chatsRepo(ctx.db).getMessage(s.customerId, body.parent_id.toLowerCase());
        if (!parent || parent.chat_id !== c.id) throw new ApiError('INVALID_ARGUMENT', 'parent_id: not a message of this chat', { details: [{ field: 'parent_id', issue: 'not in this chat' }] });
      }
      const m = await chatsRepo(ctx.db).addMessage(c, { owner_id: s.agentId, parent_id: body.parent_id?.toLowerCase(), text: body.text });
      return published(ctx, 'chatmessage_created', chatMessageJson(m));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/talk_messages/:id',
    tag: 'Service Agent',
    summary: 'A message of a chat the agent sees',
    permission: 'agent',
    params: idParams,
    response: messageSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const m = await orMissing(chatsRepo(ctx.db).getMessage(s.customerId, params.id.toLowerCase()), messageNotFound);
      await reachable(ctx, s, m.chat_id, true).catch(() => {
        throw messageNotFound();
      });
      return chatMessageJson(m);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/talk_messages/:id',
    tag: 'Service Agent',
    summary: 'Delete one of the agent’s own messages',
    permission: 'agent',
    params: idParams,
    response: messageSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const m = await chatsRepo(ctx.db).getMessage(s.customerId, params.id.toLowerCase());
      if (!m || m.owner_id !== s.agentId) throw messageNotFound();
      const d = await chatsRepo(ctx.db).deleteMessage(m.id);
      if (!d) throw messageNotFound();
      return published(ctx, 'chatmessage_deleted', chatMessageJson(d));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/talk_messages/:id/reactions',
    tag: 'Service Agent',
    summary: 'React to a message (once per emoji and agent)',
    permission: 'agent',
    params: idParams,
    body: z.object({ emoji: z.string().min(1).max(32) }),
    response: messageSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const m = await orMissing(chatsRepo(ctx.db).getMessage(s.customerId, params.id.toLowerCase()), messageNotFound);
      await reachable(ctx, s, m.chat_id).catch(() => {
        throw messageNotFound();
      });
      const r = await chatsRepo(ctx.db).react(m.id, { emoji: body.emoji, owner_type: 'agent', owner_id: s.agentId });
      if (!r) throw messageNotFound();
      return published(ctx, 'chatmessage_reaction_updated', chatMessageJson(r));
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
