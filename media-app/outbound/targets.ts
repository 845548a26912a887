/**
 * Where an outgoing call's destination is sent: tel through the customer's routes (providers in
 * order, each a fallback for the one before) once the toll-fraud policy allows it, a SIP URI directly, an extension to each of its
 * registered contacts (through the address the REGISTER came from: NAT), an agent to its addresses.
 */
import type { Knex } from '../../core/db/knex';
import type { Address } from '../../core/repos/calls';
import { extensionsRepo } from '../../core/repos/extensions';
import { agentsRepo } from '../../core/repos/agents';
import { isUuid } from '../../core/ids';
import { providerRequestUri, resolveRoutes } from '../../core/routing/resolve';
import type { BindingStore } from '../registrar/bindings';
import { admitPstnCalls, checkTelDestination, isPstnTarget, livePstnCalls, maxConcurrentPstn, noteRefusal } from '../../core/calls/dial-policy';

export interface DialTarget {
  uri: string;
  /** Next hop when it differs from the Request-URI host. */
  proxy?: string;
  auth?: { username: string; password: string };
  providerId?: string;
  headers?: Record<string, string>;
}

/**
 * `callId`: the outgoing row about to be dialled. A tel destination must pass the toll-fraud policy
 * (core/calls/dial-policy: blocked prefixes, whitelist) and, when it leaves the platform, the row is
 * admitted against the customer's concurrency cap; a refusal gives no target (nothing is dialled) and
 * is noted on the row. Without a callId (a pre-check) a customer at its cap gets no target either.
 */
export async function targetsFor(db: Knex, bindings: BindingStore, customerId: string, dest: Address, opts: { callId?: string } = {}): Promise<DialTarget[]> {
  const target = (dest.target ?? '').trim();
  switch (dest.type) {
    case 'tel': {
      let refusal = await checkTelDestination(db, customerId, target);
      const routes = refusal ? [] : await resolveRoutes(db, customerId, target);
      if (routes.length && isPstnTarget(target)) {
        if (opts.callId) refusal = await admitPstnCalls(db, customerId, [opts.callId]);
        else if ((await livePstnCalls(db, customerId)) >= (await maxConcurrentPstn(db, customerId))) refusal = { reason: 'concurrency_cap' };
      }
      if (refusal) {
        if (opts.callId) await noteRefusal(db, opts.callId, refusal);
        return [];
      }
      return routes.map(({ provider }) => ({
        uri: providerRequestUri(provider, target),
        providerId: provider.id,
        auth: provider.auth_username ? { username: provider.auth_username, password: provider.auth_password } : undefined,
        headers: provider.tech_headers && typeof provider.tech_headers === 'object' ? (provider.tech_headers as Record<string, string>) : undefined,
      }));
    }
    case 'sip':
      if (!target) return [];
      return [{ uri: /^sips?:/i.test(target) ? target : `sip:${target}` }];
    case 'extension': {
      const ext = await extensionsRepo(db).getByExtension(customerId, target);
      if (!ext) return [];
      const live = await bindings.get(`${ext.username}@${ext.domain_name}`);
      return live.map((b) => ({
        uri: b.contact,
        proxy: `sip:${b.source.address}:${b.source.port}${b.source.protocol && b.source.protocol !== 'udp' ? `;transport=${b.source.protocol}` : ''}`,
      }));
    }
    case 'agent': {
      // an agent is reached at its addresses, tried in the order the agent listed them (an agent
      // address naming another agent is skipped: no loops)
      const agent = isUuid(target) ? await agentsRepo(db).get(target.toLowerCase(), { customerId }) : null;
      if (!agent) return [];
      const out: DialTarget[] = [];
      for (const a of agent.addresses) {
        if (a.type !== 'agent') out.push(...(await targetsFor(db, bindings, customerId, a as Address, opts)));
      }
      return out;
    }
    default:
      return [];
  }
}
