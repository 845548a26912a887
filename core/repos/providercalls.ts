/**
 * providercalls: an operator's call forced through one provider (control-api/routes/providercalls.ts).
 * The record keeps the request and the ids of what it made; the calls themselves carry the provider
 * in data.forced_provider_id, which the dialler honours (media-app/outbound/targets.ts).
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { ProvidercallRow } from '../db/rows/providercalls';
export type { ProvidercallRow } from '../db/rows/providercalls';

export type ProvidercallInput = Omit<ProvidercallRow, 'id' | 'tm_create' | 'tm_update' | 'tm_delete'>;

export function providercallJson(p: ProvidercallRow) {
  return {
    id: p.id,
    customer_id: p.customer_id,
    provider_id: p.provider_id,
    flow_id: p.flow_id,
    source: p.source,
    destinations: p.destinations,
    anonymous: p.anonymous,
    call_ids: p.call_ids,
    groupcall_ids: p.groupcall_ids,
    tm_create: formatLegacy(p.tm_create),
    tm_update: formatLegacy(p.tm_update),
    tm_delete: formatLegacy(p.tm_delete),
  };
}

export function providercallsRepo(db: Db) {
  const live = () => db('providercalls').whereNull('tm_delete');
  return {
    async create(input: ProvidercallInput): Promise<ProvidercallRow> {
      const [row] = await db('providercalls')
        .insert({ ...input, id: newId(), source: JSON.stringify(input.source), destinations: JSON.stringify(input.destinations), tm_create: clock.now() })
        .returning('*');
      return row as ProvidercallRow;
    },
    async get(id: string): Promise<ProvidercallRow | null> {
      return ((await live().where({ id }).first()) as ProvidercallRow | undefined) ?? null;
    },
    /** Every customer's (the operator's view), newest first; optionally of one provider. */
    async list(params: PageParams, filter: { provider_id?: string } = {}): Promise<Page<ProvidercallRow>> {
      const q = live().select('*');
      if (filter.provider_id) q.where({ provider_id: filter.provider_id });
      return toPage(await paginate<ProvidercallRow>(q, params), (r) => r);
    },
    async softDelete(id: string): Promise<ProvidercallRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as ProvidercallRow | undefined) ?? null;
    },
  };
}
