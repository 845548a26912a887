/**
 * /conversations: threads across channels (SMS between our number and theirs, email between our
 * From and theirs), created by the first message either way. POST /conversations/{id}/messages
 * sends on the thread's channel (charged like /messages and /emails).
 */
import { z } from 'zod';
import { ApiError, permissionDenied } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { hasLevel } from '../../core/permissions';
import { defineRoute, idParams, uuid } from '../route';
import type { AuthContext } from '../context';
import { listOf, legacyTime, uuidOut } from './schemas';
import { addressOut } from './messages';
import { CONVERSATION_TYPES, conversationJson, conversationMessageJson, conversationsRepo } from '../../core/repos/conversations';
import { sendToConversation } from '../../core/conversations/send';
import { messagingDeps } from '../messaging/deps';
import { assertOwnerAgent, saveConversation, unassignConversation } from '../messaging/conversation-update';

export const conversationSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  owner_type: z.string(),
  owner_id: uuidOut(),
  account_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  type: z.enum(['', ...CONVERSATION_TYPES]),
  dialog_id: z.string(),
  self: addressOut,
  peer: addressOut,
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

export const conversationMessageSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  conversation_id: uuidOut(),
  direction: z.enum(['outgoing', 'incoming']),
  status: z.enum(['progressing', 'done', 'failed']),
  reference_type: z.enum(['', 'message', 'line', 'whatsapp', 'email']),
  reference_id: uuidOut(),
  source: addressOut,
  destination: addressOut,
  text: z.string(),
  medias: z.array(z.unknown()),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const notFound = () => new ApiError('CONVERSATION_NOT_FOUND', 'conversation not found');

function callerAgentId(auth: AuthContext): string | null {
  return auth.kind === 'agent' || auth.kind === 'delegate' ? auth.agentId : null;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/conversations',
    tag: 'Conversation',
    summary: 'List conversations',
    description: 'owner_id filters by the owning agent; an agent (below manager) must pass its own id (else 403).',
    permission: 'agent',
    paginated: true,
    query: z.object({
      owner_id: uuid().optional(),
      type: z.enum(CONVERSATION_TYPES).optional(),
      page_size: z.string().optional(),
      page_token: z.string().optional(),
    }),
    response: listOf(conversationSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const owner = query.owner_id && query.owner_id !== EMPTY_UUID ? query.owner_id.toLowerCase() : undefined;
      if (!hasLevel(auth.permission, 'manager') && (!owner || owner !== callerAgentId(auth))) {
        throw permissionDenied('an agent may list only its own conversations (owner_id = its agent id)');
      }
      const p = await conversationsRepo(ctx.db).list(auth.customerId, page, { owner_id: owner, type: query.type });
      return { result: p.result.map(conversationJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id',
    tag: 'Conversation',
    summary: 'Get a conversation',
    permission: 'agent',
    params: idParams,
    response: conversationSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await conversationsRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!c) throw notFound();
      return conversationJson(c);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/conversations/:id',
    tag: 'Conversation',
    summary: 'Update a conversation (owner, name, detail)',
    permission: 'manager',
    params: idParams,
    body: z.object({
      owner_type: z.enum(['', 'agent']).optional(),
      owner_id: uuid().optional(),
      name: z.string().max(255).optional(),
      detail: z.string().max(1024).optional(),
    }),
    response: conversationSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const repo = conversationsRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
      if (body.owner_id) await assertOwnerAgent(ctx, auth.customerId, body.owner_id.toLowerCase());
      const patch = { ...body, ...(body.owner_id ? { owner_id: body.owner_id.toLowerCase() } : {}) };
      return saveConversation(ctx, params.id, patch, notFound);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/:id/unassign',
    tag: 'Conversation',
    summary: 'Clear the owner of a conversation',
    permission: 'agent',
    params: idParams,
    response: conversationSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = conversationsRepo(ctx.db);
      const c = await repo.getOwned(auth.customerId, params.id);
      if (!c) throw notFound();
      if (!hasLevel(auth.permission, 'manager') && c.owner_id !== callerAgentId(auth)) throw permissionDenied('not the owner of this conversation');
      return unassignConversation(ctx, c.id, notFound);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/:id/messages',
    tag: 'Conversation',
    summary: 'Messages of a conversation',
    permission: 'agent',
    params: idParams,
    paginated: true,
    response: listOf(conversationMessageSchema),
    handler: async ({ ctx, auth, params, page }) => {
      const repo = conversationsRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
      const p = await repo.listMessages(params.id, page);
      return { result: p.result.map(conversationMessageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/:id/messages',
    tag: 'Conversation',
    summary: 'Send a message in a conversation (on its channel)',
    permission: 'agent',
    params: idParams,
    body: z.object({ text: z.string().min(1).max(1600), medias: z.array(z.unknown()).max(0, 'medias are not supported yet').optional() }),
    response: conversationMessageSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await conversationsRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!c) throw notFound();
      return conversationMessageJson(await sendToConversation(messagingDeps(ctx), c, body.text));
    },
  }),
];
