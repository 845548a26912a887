/**
 * Outbound route resolution: which providers to try, in order, for a customer dialling a PSTN
 * destination. The dialler tries the first and falls back to the next on failure.
 *
 * Order: the customer's own routes first, then the default routes (customer_id = empty UUID) as a
 * fallback. Within each group, the most specific matching target first (longest digit prefix, `all`
 * last), then priority ascending (1 before 2), then the older route. A provider appears once, at its
 * first position.
 */
import type { Db } from '../db/knex';
import { EMPTY_UUID } from '../ids';
import { digitsOf } from '../numbers/e164';
import { routesRepo, type RouteRow } from '../repos/routes';
import { providersRepo, type ProviderRow } from '../repos/providers';

export interface ResolvedRoute {
  provider: ProviderRow;
  route: RouteRow;
}

/** Does a route target (`all` or a digit prefix) match these destination digits? */
export function targetMatches(target: string, digits: string): boolean {
  return target === 'all' || (target.length > 0 && digits.startsWith(target));
}

/** Orders matching routes as described above (pure; exported for tests and the dialler). */
export function orderRoutes(routes: RouteRow[], customerId: string, destination: string): RouteRow[] {
  const digits = digitsOf(destination);
  const specificity = (r: RouteRow) => (r.target === 'all' ? -1 : r.target.length);
  return routes
    .filter((r) => targetMatches(r.target, digits))
    .sort((a, b) => {
      const ga = a.customer_id === customerId ? 0 : 1;
      const gb = b.customer_id === customerId ? 0 : 1;
      if (ga !== gb) return ga - gb;
      if (specificity(a) !== specificity(b)) return specificity(b) - specificity(a);
      if (a.priority !== b.priority) return a.priority - b.priority;
      return a.tm_create.getTime() - b.tm_create.getTime() || a.id.localeCompare(b.id);
    });
}

/** The ordered provider list for `customerId` dialling `destination` (E.164); empty when nothing matches. */
export async function resolveRoutes(db: Db, customerId: string, destination: string): Promise<ResolvedRoute[]> {
  if (!/^\+?\d{1,20}$/.test(destination)) return [];
  const ids = customerId === EMPTY_UUID ? [EMPTY_UUID] : [customerId, EMPTY_UUID];
  const ordered = orderRoutes(await routesRepo(db).candidates(ids), customerId, destination);
  const providers = new Map((await providersRepo(db).getMany([...new Set(ordered.map((r) => r.provider_id))])).map((p) => [p.id, p]));
  const seen = new Set<string>();
  const out: ResolvedRoute[] = [];
  for (const route of ordered) {
    const provider = providers.get(route.provider_id);
    if (!provider || seen.has(provider.id)) continue;
    seen.add(provider.id);
    out.push({ provider, route });
  }
  return out;
}

/** The Request-URI for sending `destination` to `provider`: tech prefix and postfix around the E.164 number. */
export function providerRequestUri(provider: Pick<ProviderRow, 'hostname' | 'tech_prefix' | 'tech_postfix' | 'transport'>, destination: string): string {
  const transport = provider.transport && provider.transport !== 'udp' ? `;transport=${provider.transport}` : '';
  return `sip:${provider.tech_prefix}${destination}${provider.tech_postfix}@${provider.hostname}${transport}`;
}

/** The provider an operator forced a call through (POST /providercalls: the call's data.forced_provider_id), or null. */
export async function forcedProvider(db: Db, callId: string): Promise<ProviderRow | null> {
  const row = (await db('calls').where({ id: callId }).first(db.raw(`data->>'forced_provider_id' as id`))) as { id: string | null } | undefined;
  return row?.id ? providersRepo(db).get(row.id) : null;
}
