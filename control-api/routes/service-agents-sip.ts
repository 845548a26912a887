/**
 * /service_agents/me/sip_credentials: the signed-in agent's browser phone credential.
 *
 *   POST   issues a short-lived SIP digest credential bound to one of the agent's extension
 *          addresses (body `extension_id` picks which; default the first). 400 when the agent has no
 *          extension among its addresses, or `extension_id` is not one of them.
 *   DELETE revokes every browser credential of the agent (the browser phone's sign-out).
 * A credential ends with the login session that asked for it too: that session's sign-out, a password
 * change or an account freeze (control-api/middleware/session-revoke.ts, core/workspace/web-sip-credentials.ts).
 *
 * The decision and the registrar's side: core/workspace/web-sip-credentials.ts.
 */
import { z } from 'zod';
import { defineRoute, uuid, type AnyRoute } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { formatRfc3339 } from '../../core/time';
import { WebSipCredentials } from '../../core/workspace/web-sip-credentials';
import type { ExtensionRow } from '../../core/repos/extensions';
import type { AppContext } from '../context';
import { agentScope, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import { agentReachRepo } from '../../core/repos/agent-reach';

const credentialSchema = z.object({
  username: z.string(),
  password: z.string(),
  uri: z.string(),
  extension: z.string(),
  extension_id: z.string(),
  domain_name: z.string(),
  ws_url: z.string().nullable(),
  expire: z.string(),
});

const store = (ctx: AppContext) => new WebSipCredentials(ctx.redis, ctx.config.redisKeyPrefix);

/** The extension the credential is bound to: `extensionId` if it is one of the agent's, else the first. */
async function agentExtension(ctx: AppContext, s: AgentScope, extensionId: string | undefined): Promise<ExtensionRow> {
  const me = await ctx.repos.agents.get(s.agentId, { customerId: s.customerId });
  if (!me) throw notFound('RESOURCE_NOT_FOUND', 'agent not found');
  const numbers = me.addresses.filter((a) => a.type === 'extension').map((a) => a.target);
  if (!numbers.length) throw invalidArgument('the agent has no extension among its addresses: add one (type "extension") to take calls in the browser', [{ field: 'addresses' }]);
  const rows = await agentReachRepo(ctx.db, s).extensions(numbers);
  if (extensionId) {
    const e = rows.find((r) => r.id === extensionId.toLowerCase());
    if (!e) throw invalidArgument("extension_id is not one of the agent's extension addresses", [{ field: 'extension_id' }]);
    return e;
  }
  for (const n of numbers) {
    const e = rows.find((r) => r.extension === n);
    if (e) return e;
  }
  throw invalidArgument("none of the agent's extension addresses names an existing extension", [{ field: 'addresses' }]);
}

const defs: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/service_agents/me/sip_credentials',
    tag: 'Service Agent',
    summary: "Issue a short-lived SIP credential for the browser phone, bound to the agent's extension",
    permission: 'agent',
    body: z.strictObject({ extension_id: uuid().optional() }),
    response: credentialSchema,
    handler: async ({ ctx, auth, body }) => {
      const s = agentScope(auth);
      const ext = await agentExtension(ctx, s, body.extension_id);
      // bound to the asking session: its sign-out, a password change or a freeze ends the credential too
      const session = auth.kind === 'agent' || auth.kind === 'delegate' ? auth.session : undefined;
      const cred = await store(ctx).issue(
        {
          customerId: s.customerId,
          agentId: s.agentId,
          extensionId: ext.id,
          aorUser: ext.username,
          aorDomain: ext.domain_name,
          sessionId: session?.id ?? null,
          sessionGeneration: session?.generation ?? 0,
        },
        ctx.config.webSipCredentialTtlSec,
      );
      return {
        username: cred.username,
        password: cred.password,
        uri: `sip:${ext.username}@${ext.domain_name}`,
        extension: ext.extension,
        extension_id: ext.id,
        domain_name: ext.domain_name,
        ws_url: ctx.config.sipWssPublicUrl,
        expire: formatRfc3339(new Date(cred.expiresAt)) ?? '',
      };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/me/sip_credentials',
    tag: 'Service Agent',
    summary: "Revoke the agent's browser phone SIP credentials (sign-out)",
    permission: 'agent',
    response: z.object({ revoked: z.number() }),
    handler: async ({ ctx, auth }) => ({ revoked: await store(ctx).revokeAgent(agentScope(auth).agentId) }),
  }),
];

export const routes: AnyRoute[] = serviceAgentRoutes(defs);
