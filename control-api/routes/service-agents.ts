/**
 * /service_agents (and /service-agents): the calling agent's own workspace. me (profile, addresses,
 * password, status), the customer, fellow agents (directory), calls and conversations within the
 * agent's reach (see service-agents/scope.ts); everything else answers 404.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, text, type AnyRoute } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { agentJson, customerJson } from '../../core/repos';
import { AGENT_STATUSES, RING_METHODS } from '../../core/repos/agents';
import { callJson, callsRepo } from '../../core/repos/calls';
import { toPage } from '../../core/pagination';
import { conversationJson, conversationMessageJson, conversationsRepo } from '../../core/repos/conversations';
import { sendToConversation } from '../../core/conversations/send';
import { postMessage, sessionOfConversation } from '../../core/webchat/service';
import { PASSWORD_MIN_LENGTH } from '../auth/schemas';
import { messagingDeps } from '../messaging/deps';
import { sessionsRevoked } from '../middleware/session-revoke';
import { assertOwnerAgent, saveConversation, unassignConversation } from '../messaging/conversation-update';
import { agentSchema, customerSchema, listOf } from './schemas';
import { callSchema } from './calls';
import { conversationMessageSchema, conversationSchema } from './conversations';
import { agentScope, canSeeCall, canSeeConversation, pageQuery, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import type { AppContext, AuthContext } from '../context';
import { agentReachRepo } from '../../core/repos/agent-reach';

const addressIn = z.strictObject({
  type: z.enum(['agent', 'ai', 'ai_team', 'conference', 'email', 'extension', 'line', 'sip', 'tel', 'webchat', 'web_session', 'whatsapp']),
  target: z.string().min(1).max(255),
  target_name: z.string().max(255).optional(),
  name: z.string().max(255).optional(),
  detail: z.string().max(1024).optional(),
});

async function me(ctx: AppContext, s: AgentScope) {
  const a = await ctx.repos.agents.get(s.agentId, { customerId: s.customerId });
  if (!a) throw notFound('RESOURCE_NOT_FOUND', 'agent not found');
  return a;
}

async function publishAgent(ctx: AppContext, type: 'agent_updated' | 'agent_status_updated', json: ReturnType<typeof agentJson>) {
  await messagingDeps(ctx).publish(type, json);
}

/** Changes the signed-in agent; a change others may see (not the password) is published as agent_updated. */
async function updateMe(ctx: AppContext, auth: AuthContext, patch: Parameters<AppContext['repos']['agents']['update']>[1], publishIt: boolean) {
  const s = agentScope(auth);
  await me(ctx, s);
  const a = await ctx.repos.agents.update(s.agentId, patch);
  if (!a) throw notFound();
  const json = agentJson(a);
  if (publishIt) await publishAgent(ctx, 'agent_updated', json);
  return json;
}

const callNotFound = () => new ApiError('CALL_NOT_FOUND', 'call not found');
const conversationNotFound = () => new ApiError('CONVERSATION_NOT_FOUND', 'conversation not found');

async function ownConversation(ctx: AppContext, s: AgentScope, id: string) {
  const c = await conversationsRepo(ctx.db).getOwned(s.customerId, id);
  if (!c || !canSeeConversation(s, c)) throw conversationNotFound();
  return c;
}

const defs: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/service_agents/me',
    tag: 'Service Agent',
    summary: "Get the authenticated agent's details",
    permission: 'agent',
    response: agentSchema,
    handler: async ({ ctx, auth }) => agentJson(await me(ctx, agentScope(auth))),
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/me',
    tag: 'Service Agent',
    summary: "Update the authenticated agent's name, detail and ring method",
    permission: 'agent',
    body: z.object({ name: text().optional(), detail: text(1024).optional(), ring_method: z.enum(RING_METHODS).optional() }),
    response: agentSchema,
    handler: ({ ctx, auth, body }) => updateMe(ctx, auth, body, true),
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/me/addresses',
    tag: 'Service Agent',
    summary: "Replace the authenticated agent's addresses",
    permission: 'agent',
    body: z.object({ addresses: z.array(addressIn).max(20) }),
    response: agentSchema,
    handler: ({ ctx, auth, body }) => updateMe(ctx, auth, { addresses: body.addresses }, true),
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/me/password',
    tag: 'Service Agent',
    summary: "Change the authenticated agent's password",
    permission: 'agent',
    body: z.object({ password: z.string().min(PASSWORD_MIN_LENGTH).max(1024) }),
    response: agentSchema,
    handler: async ({ ctx, auth, body }) => {
      const json = await updateMe(ctx, auth, { password: body.password }, false);
      await sessionsRevoked(ctx, auth.customerId); // every session of the agent ends, this one too
      return json;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/me/status',
    tag: 'Service Agent',
    summary: "Set the authenticated agent's status",
    permission: 'agent',
    body: z.object({ status: z.enum(AGENT_STATUSES.filter((x) => x !== 'ringing') as ['', 'available', 'away', 'busy', 'offline']) }),
    response: agentSchema,
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      const before = await me(ctx, s);
      const a = await ctx.repos.agents.update(s.agentId, { status: body.status });
      if (!a) throw notFound();
      const json = agentJson(a);
      if (before.status !== a.status) await publishAgent(ctx, 'agent_status_updated', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/customer',
    tag: 'Service Agent',
    summary: "The agent's customer",
    permission: 'agent',
    response: customerSchema,
    handler: async ({ ctx, auth }) => {
      const c = await ctx.repos.customers.get(agentScope(auth).customerId);
      if (!c) throw notFound();
      return customerJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/agents',
    tag: 'Service Agent',
    summary: 'Fellow agents of the customer (directory)',
    permission: 'agent',
    paginated: true,
    response: listOf(agentSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await ctx.repos.agents.listByCustomer(agentScope(auth).customerId, page);
      return { result: p.result.map(agentJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/agents/:id',
    tag: 'Service Agent',
    summary: 'A fellow agent',
    permission: 'agent',
    params: idParams,
    response: agentSchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await ctx.repos.agents.get(params.id.toLowerCase(), { customerId: agentScope(auth).customerId });
      if (!a) throw notFound('RESOURCE_NOT_FOUND', 'agent not found');
      return agentJson(a);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/calls',
    tag: 'Service Agent',
    summary: "The agent's calls",
    permission: 'agent',
    paginated: true,
    response: listOf(callSchema),
    handler: async ({ ctx, auth, page }) => {
      return toPage(await agentReachRepo(ctx.db, agentScope(auth)).calls(page), callJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/calls/:id',
    tag: 'Service Agent',
    summary: 'One of the agent’s calls',
    permission: 'agent',
    params: idParams,
    response: callSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const c = await callsRepo(ctx.db).getOwned(s.customerId, params.id.toLowerCase());
      if (!c || !canSeeCall(s, c)) throw callNotFound();
      return callJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/conversations',
    tag: 'Service Agent',
    summary: 'Conversations assigned to the agent',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(conversationSchema),
    handler: async ({ ctx, auth, page }) => {
      const s = agentScope(auth);
      const p = await conversationsRepo(ctx.db).list(s.customerId, page, { owner_id: s.agentId });
      return { result: p.result.map(conversationJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/conversations/:id',
    tag: 'Service Agent',
    summary: 'A conversation assigned to the agent',
    permission: 'agent',
    params: idParams,
    response: conversationSchema,
    handler: async ({ ctx, auth, params }) => conversationJson(await ownConversation(ctx, agentScope(auth), params.id.toLowerCase())),
  }),
  defineRoute({
    method: 'put',
    path: '/service_agents/conversations/:id',
    tag: 'Service Agent',
    summary: 'Rename a conversation, or hand it to another agent',
    description: 'owner_id may name another agent of the customer (hand-over); the conversation then leaves this agent’s reach.',
    permission: 'agent',
    params: idParams,
    body: z.object({ owner_type: z.enum(['agent']).optional(), owner_id: uuid().optional(), name: text().optional(), detail: text(1024).optional() }),
    response: conversationSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await ownConversation(ctx, s, params.id.toLowerCase());
      const patch: Record<string, string> = {};
      if (body.name !== undefined) patch.name = body.name;
      if (body.detail !== undefined) patch.detail = body.detail;
      if (body.owner_id !== undefined) {
        const owner = body.owner_id.toLowerCase();
        if (owner === EMPTY_UUID) throw new ApiError('INVALID_ARGUMENT', 'owner_id: use POST .../unassign to clear the owner', { details: [{ field: 'owner_id', issue: 'empty' }] });
        await assertOwnerAgent(ctx, s.customerId, owner);
        patch.owner_type = 'agent';
        patch.owner_id = owner;
      }
      return saveConversation(ctx, c.id, patch, conversationNotFound);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/conversations/:id/unassign',
    tag: 'Service Agent',
    summary: 'Give a conversation back (clear its owner)',
    permission: 'agent',
    params: idParams,
    response: conversationSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await ownConversation(ctx, agentScope(auth), params.id.toLowerCase());
      return unassignConversation(ctx, c.id, conversationNotFound);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/conversations/:id/messages',
    tag: 'Service Agent',
    summary: 'Messages of a conversation assigned to the agent',
    permission: 'agent',
    params: idParams,
    paginated: true,
    query: z.object(pageQuery),
    response: listOf(conversationMessageSchema),
    handler: async ({ ctx, auth, params, page }) => {
      const c = await ownConversation(ctx, agentScope(auth), params.id.toLowerCase());
      const p = await conversationsRepo(ctx.db).listMessages(c.id, page);
      return { result: p.result.map(conversationMessageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/service_agents/conversations/:id/messages',
    tag: 'Service Agent',
    summary: 'Reply in a conversation assigned to the agent (on its channel)',
    description: 'A webchat conversation replies to the visitor’s session (409 STATE_INVALID once the session ended).',
    permission: 'agent',
    params: idParams,
    body: z.object({ text: z.string().min(1).max(4096), medias: z.array(z.unknown()).max(0, 'medias are not supported yet').optional() }),
    response: conversationMessageSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = agentScope(auth);
      const c = await ownConversation(ctx, s, params.id.toLowerCase());
      const deps = messagingDeps(ctx);
      const session = await sessionOfConversation(deps, c);
      if (session) {
        const m = await postMessage(deps, session, { direction: 'outbound', text: body.text, sender_id: s.agentId });
        if (!m) throw new ApiError('STATE_INVALID', 'the webchat session has ended');
        const [cm] = await conversationsRepo(ctx.db).messagesByReference(m.id);
        if (!cm) throw notFound();
        return conversationMessageJson(cm);
      }
      if (body.text.length > 1600) throw new ApiError('INVALID_ARGUMENT', 'text: at most 1600 characters on this channel', { details: [{ field: 'text', issue: 'too long' }] });
      return conversationMessageJson(await sendToConversation(deps, c, body.text));
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
