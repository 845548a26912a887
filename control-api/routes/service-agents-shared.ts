/**
 * /service_agents reads of what the customer shares with its agents (tags, contacts) and of what
 * hangs off the agent's own calls and conversations: its extension addresses, transcribes and
 * transcripts of its calls, AI calls (and their messages) on its calls or conversations.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { toPage } from '../../core/pagination';
import { tagJson, tagsRepo } from '../../core/repos/tags';
import { contactJson, contactsRepo } from '../../core/repos/contacts';
import { extensionJson } from '../../core/repos/extensions';
import { transcribeJson } from '../../core/repos/transcribes';
import { transcriptJson } from '../../core/repos/transcripts';
import { aicallJson, aimessageJson } from '../../core/repos/ai-calls';
import type { AppContext } from '../context';
import { agentScope, pageQuery, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import { agentReachRepo } from '../../core/repos/agent-reach';

const anyList = z.object({ result: z.array(z.record(z.string(), z.unknown())), next_page_token: z.string() });
const anyObject = z.record(z.string(), z.unknown());

/** The extension numbers among the agent's addresses (a query builder is thenable: never return one from an async function). */
async function extensionNumbers(ctx: AppContext, s: AgentScope): Promise<string[]> {
  const me = await ctx.repos.agents.get(s.agentId, { customerId: s.customerId });
  return (me?.addresses ?? []).filter((a) => a.type === 'extension').map((a) => a.target);
}

const defs: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/service_agents/tags',
    tag: 'Service Agent',
    summary: 'Tags of the customer',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: anyList,
    handler: async ({ ctx, auth, page }) => {
      const p = await tagsRepo(ctx.db).list(agentScope(auth).customerId, page);
      return { result: p.result.map(tagJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/tags/:id',
    tag: 'Service Agent',
    summary: 'A tag of the customer',
    permission: 'agent',
    params: idParams,
    response: anyObject,
    handler: async ({ ctx, auth, params }) => {
      const t = await tagsRepo(ctx.db).get(agentScope(auth).customerId, params.id.toLowerCase());
      if (!t) throw notFound('RESOURCE_NOT_FOUND', 'tag not found');
      return tagJson(t);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contacts',
    tag: 'Service Agent',
    summary: 'Contacts of the customer (shared by its agents)',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: anyList,
    handler: async ({ ctx, auth, page }) => {
      const p = await contactsRepo(ctx.db).list(agentScope(auth).customerId, page);
      return { result: p.result.map(contactJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contacts/lookup',
    tag: 'Service Agent',
    summary: 'Find a contact by phone (E.164) or email',
    permission: 'agent',
    query: z.object({
      phone: z
        .string()
        .regex(/^\+[1-9][0-9]{1,14}$/, 'E.164')
        .optional(),
      email: z.string().max(320).optional(),
    }),
    response: anyObject,
    handler: async ({ ctx, auth, query }) => {
      if (!query.phone === !query.email) throw new ApiError('INVALID_ARGUMENT', 'exactly one of phone and email', { details: [{ field: 'phone', issue: 'exactly one of phone and email' }] });
      const c = await contactsRepo(ctx.db).lookup(agentScope(auth).customerId, query.phone ? { type: 'tel', target: query.phone } : { type: 'email', target: query.email! });
      if (!c) throw notFound('RESOURCE_NOT_FOUND', 'contact not found');
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contacts/:id',
    tag: 'Service Agent',
    summary: 'A contact of the customer',
    permission: 'agent',
    params: idParams,
    response: anyObject,
    handler: async ({ ctx, auth, params }) => {
      const c = await contactsRepo(ctx.db).get(agentScope(auth).customerId, params.id.toLowerCase());
      if (!c) throw notFound('RESOURCE_NOT_FOUND', 'contact not found');
      return contactJson(c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/extensions',
    tag: 'Service Agent',
    summary: "The agent's own extensions (its extension addresses)",
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: anyList,
    handler: async ({ ctx, auth, page }) => {
      const s = agentScope(auth);
      return toPage(await agentReachRepo(ctx.db, s).extensionPage(await extensionNumbers(ctx, s), page), (e) => extensionJson(e, { sipDomain: ctx.config.sipDomain }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/extensions/:id',
    tag: 'Service Agent',
    summary: 'One of the agent’s extensions',
    permission: 'agent',
    params: idParams,
    response: anyObject,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const e = await agentReachRepo(ctx.db, s).extension(await extensionNumbers(ctx, s), params.id.toLowerCase());
      if (!e) throw notFound('RESOURCE_NOT_FOUND', 'extension not found');
      return extensionJson(e, { sipDomain: ctx.config.sipDomain });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/transcribes',
    tag: 'Service Agent',
    summary: 'Transcribes of the agent’s calls',
    permission: 'agent',
    paginated: true,
    query: z.object({ reference_type: z.enum(['call']).optional(), reference_id: uuid().optional(), ...pageQuery }),
    response: anyList,
    handler: async ({ ctx, auth, page, query }) => {
      const s = agentScope(auth);
      return toPage(await agentReachRepo(ctx.db, s).transcribes(page, query.reference_id?.toLowerCase()), transcribeJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/transcripts',
    tag: 'Service Agent',
    summary: 'Transcript lines of a transcribe of the agent’s calls',
    permission: 'agent',
    paginated: true,
    query: z.object({ transcribe_id: uuid(), ...pageQuery }),
    response: anyList,
    handler: async ({ ctx, auth, page, query }) => {
      const s = agentScope(auth);
      const reach = agentReachRepo(ctx.db, s);
      const t = await reach.transcribeId(query.transcribe_id.toLowerCase());
      if (!t) throw notFound('RESOURCE_NOT_FOUND', 'transcribe not found');
      return toPage(await reach.transcripts(t, page), transcriptJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/aicalls',
    tag: 'Service Agent',
    summary: 'AI calls on the agent’s calls and conversations',
    permission: 'agent',
    paginated: true,
    query: z.object({ reference_type: z.enum(['call', 'conversation']).optional(), reference_id: uuid().optional(), status: z.string().max(20).optional(), ...pageQuery }),
    response: anyList,
    handler: async ({ ctx, auth, page, query }) => {
      const s = agentScope(auth);
      const p = await agentReachRepo(ctx.db, s).aicalls(page, { reference_type: query.reference_type, reference_id: query.reference_id?.toLowerCase(), status: query.status });
      return toPage(p, aicallJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/aimessages',
    tag: 'Service Agent',
    summary: 'Messages of an AI call on the agent’s calls or conversations',
    permission: 'agent',
    paginated: true,
    query: z.object({ aicall_id: uuid(), ...pageQuery }),
    response: anyList,
    handler: async ({ ctx, auth, page, query }) => {
      const s = agentScope(auth);
      const reach = agentReachRepo(ctx.db, s);
      const a = await reach.aicallId(query.aicall_id.toLowerCase());
      if (!a) throw new ApiError('AIMESSAGE_NOT_FOUND', 'aicall not found');
      return toPage(await reach.aimessages(a, page), aimessageJson);
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
