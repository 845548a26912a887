/**
 * Where an outgoing call's destination is sent: tel through the customer's routes (providers in
 * order, each a fallback for the one before), a SIP URI directly, an extension to each of its
 * registered contacts (through the address the REGISTER came from: NAT).
 */
import type { Knex } from '../../core/db/knex';
import type { Address } from '../../core/repos/calls';
import { extensionsRepo } from '../../core/repos/extensions';
import { providerRequestUri, resolveRoutes } from '../../core/routing/resolve';
import type { BindingStore } from '../registrar/bindings';

export interface DialTarget {
  uri: string;
  /** Next hop when it differs from the Request-URI host. */
  proxy?: string;
  auth?: { username: string; password: string };
  providerId?: string;
  headers?: Record<string, string>;
}

export async function targetsFor(db: Knex, bindings: BindingStore, customerId: string, dest: Address): Promise<DialTarget[]> {
  const target = (dest.target ?? '').trim();
  switch (dest.type) {
    case 'tel': {
      const routes = await resolveRoutes(db, customerId, target);
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
    default:
      return [];
  }
}
