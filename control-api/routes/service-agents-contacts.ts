/**
 * /service_agents/contacts writes: create, update, delete contacts, their addresses and tags. Contacts
 * are shared by the whole customer (see service-agents/scope.ts), so an agent may change any contact
 * of its own customer; another customer's answers 404. The customer-level /contacts routes are reused
 * as they are (same validation, same repo), run as the calling agent.
 */
import type { AnyRoute } from '../route';
import { routes as contactRoutes } from './contacts';
import { agentScope, serviceAgentRoutes } from '../service-agents/scope';

/** The writes; the reads (list, lookup, get) are in service-agents-shared.ts. */
const defs: AnyRoute[] = (contactRoutes as AnyRoute[])
  .filter((r) => r.method !== 'get')
  .map((r) => ({
    ...r,
    path: `/service_agents${r.path}`,
    summary: `${r.summary} (service agent)`,
    handler: (args) => {
      agentScope(args.auth);
      return r.handler(args);
    },
  }));

export const routes = serviceAgentRoutes(defs);
