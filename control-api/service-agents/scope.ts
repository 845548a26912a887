/**
 * What a service agent may see. Every /service_agents route runs as the calling agent (a login
 * token; accesskeys have no agent and get DIRECT_ACCESS_NOT_SUPPORTED, direct tokens are refused),
 * and anything outside the agent's reach answers 404 like another customer's resource:
 *   calls          owned by the agent, or with the agent as source or destination address
 *   conversations  owned by the agent
 *   contact cases  owned by the agent, or open and unowned (the shared queue the agent picks from)
 *   talk chats     the agent is a participant
 *   contacts, tags shared by the whole customer
 *   extensions     the agent's own extension addresses
 */
import { z } from 'zod';
import type { AuthContext } from '../context';
import type { AnyRoute } from '../route';
import { permissionDenied } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import type { CallRow } from '../../core/repos/calls';
import type { ConversationRow } from '../../core/repos/conversations';
import type { ContactCaseRow } from '../../core/repos/contact-cases';
import type { AgentScope } from '../../core/repos/agent-reach';

export type { AgentScope };

export function agentScope(auth: AuthContext): AgentScope {
  if (auth.kind !== 'agent' && auth.kind !== 'delegate') throw permissionDenied('service agent endpoints need an agent login token');
  return { customerId: auth.customerId, agentId: auth.agentId.toLowerCase() };
}

const isAgentAddress = (a: unknown, agentId: string) =>
  !!a && typeof a === 'object' && (a as { type?: unknown }).type === 'agent' && String((a as { target?: unknown }).target).toLowerCase() === agentId;

export function canSeeCall(s: AgentScope, c: CallRow): boolean {
  return c.customer_id === s.customerId && ((c.owner_type === 'agent' && c.owner_id === s.agentId) || isAgentAddress(c.source, s.agentId) || isAgentAddress(c.destination, s.agentId));
}

export function canSeeConversation(s: AgentScope, c: ConversationRow): boolean {
  return c.customer_id === s.customerId && c.owner_id === s.agentId;
}

export function canSeeCase(s: AgentScope, c: ContactCaseRow): boolean {
  if (c.customer_id !== s.customerId) return false;
  return c.owner_id === s.agentId || (c.status === 'open' && c.owner_id === EMPTY_UUID);
}

/**
 * The same route under both spellings: /service_agents/... (the OpenAPI document's) and
 * /service-agents/... (the spec's prose). Every service-agent route is a login-token route.
 */
export function serviceAgentRoutes(defs: AnyRoute[]): AnyRoute[] {
  return defs.flatMap((d) => {
    const base: AnyRoute = { ...d, tag: 'Service Agent', jwtOnly: true, permission: 'agent' };
    const alias: AnyRoute = { ...base, path: d.path.replace(/^\/service_agents/, '/service-agents'), summary: `${d.summary} (alias spelling)` };
    return [base, alias];
  });
}

export const pageQuery = { page_size: z.string().optional(), page_token: z.string().optional() };
