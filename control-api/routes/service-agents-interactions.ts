/**
 * /service_agents/contact_interactions and /service_agents/contact_peer_events: the peer events of
 * the calls and conversations within the agent's reach only (its calls, its conversations and their
 * messages); with no filter, /contact_interactions lists the last `since` days (default 30d).
 */
import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../route';
import { listPeerEvents } from '../../core/workspace/peer-events';
import { agentScope, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import { agentReachRepo } from '../../core/repos/agent-reach';
import { interactionQuery, peerEventList, peerEventQuery, peerFilterOf } from './contact-interactions';
import type { AppContext } from '../context';

const reachOf = (ctx: AppContext, s: AgentScope) => agentReachRepo(ctx.db, s).peerReach();

const defs: AnyRoute[] = [
  defineRoute({
    method: 'get',
    path: '/service_agents/contact_interactions',
    tag: 'Service Agent',
    summary: 'Interactions on the agent’s calls and conversations',
    description: 'At most one filter (peer_type + peer_target, contact_id or address_id); without one, the last `since` days ("30d" default, "180d" at most).',
    permission: 'agent',
    paginated: true,
    query: z.object({ ...interactionQuery, since: z.string().max(8).optional() }),
    response: peerEventList,
    handler: async ({ ctx, auth, query, page }) => {
      const s = agentScope(auth);
      return listPeerEvents(ctx.db, s.customerId, await peerFilterOf(ctx.db, s.customerId, query, { allowAddress: true, allowSince: true }), page, reachOf(ctx, s));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/contact_peer_events',
    tag: 'Service Agent',
    summary: 'Peer events on the agent’s calls and conversations, of one peer or contact',
    permission: 'agent',
    paginated: true,
    query: peerEventQuery,
    response: peerEventList,
    handler: async ({ ctx, auth, query, page }) => {
      const s = agentScope(auth);
      return listPeerEvents(ctx.db, s.customerId, await peerFilterOf(ctx.db, s.customerId, query, { allowAddress: false, allowSince: false }), page, reachOf(ctx, s));
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
