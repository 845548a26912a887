/**
 * routes (the outbound routing resource, not HTTP routes): customer + destination prefix -> provider,
 * ordered by priority. customer_id is the empty UUID for a default route of every customer; target
 * is `all` or the leading digits of the E.164 destination (country code or longer).
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { RouteRow } from '../db/rows/routes';
export type { RouteRow } from '../db/rows/routes';

export type RouteFields = Pick<RouteRow, 'customer_id' | 'name' | 'detail' | 'provider_id' | 'priority' | 'target'>;

export function routeJson(r: RouteRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    name: r.name,
    detail: r.detail,
    provider_id: r.provider_id,
    priority: r.priority,
    target: r.target,
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
    tm_delete: formatLegacy(r.tm_delete),
  };
}

export function routesRepo(db: Db) {
  const table = () => db('routes');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(f: RouteFields): Promise<RouteRow> {
      const [row] = await table()
        .insert({ ...f, id: newId(), tm_create: clock.now() })
        .returning('*');
      return row as RouteRow;
    },
    async get(id: string): Promise<RouteRow | null> {
      return ((await live().where({ id }).first()) as RouteRow | undefined) ?? null;
    },
    async update(id: string, f: Partial<Omit<RouteFields, 'customer_id'>>): Promise<RouteRow | null> {
      const [row] = await live()
        .where({ id })
        .update({ ...f, tm_update: clock.now() })
        .returning('*');
      return (row as RouteRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<RouteRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as RouteRow | undefined) ?? null;
    },
    async list(params: PageParams, filter: { customerId?: string } = {}): Promise<Page<RouteRow>> {
      const q = live().select('*');
      if (filter.customerId) q.where({ customer_id: filter.customerId });
      return toPage(await paginate<RouteRow>(q, params), (r) => r);
    },
    /** Live routes of these customers (the customer's own and the defaults) joined to live providers. */
    async candidates(customerIds: string[]): Promise<RouteRow[]> {
      return (await live().whereIn('customer_id', customerIds).whereExists(db('providers').whereRaw('providers.id = routes.provider_id').whereNull('providers.tm_delete')).select('*')) as RouteRow[];
    },
  };
}
