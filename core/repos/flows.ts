/**
 * flows: the customer's action lists. Deletes are soft; flows made for one call's inline actions
 * (persist = false) are readable by id (the call's flow_id) but never listed.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { FlowDefinition } from '../flow';
import type { FlowRow } from '../db/rows/flows';
export type { FlowRow } from '../db/rows/flows';

export type FlowCreate = Pick<FlowRow, 'customer_id' | 'actions'> & Partial<Pick<FlowRow, 'id' | 'type' | 'name' | 'detail' | 'on_complete_flow_id' | 'persist'>>;
export type FlowPatch = Partial<Pick<FlowRow, 'name' | 'detail' | 'actions' | 'on_complete_flow_id' | 'direct_hash'>>;

/** The Flow resource (spec: Flow; RFC 3339 or null timestamps). */
export function flowJson(f: FlowRow) {
  return {
    id: f.id,
    customer_id: f.customer_id,
    type: f.type,
    name: f.name,
    detail: f.detail,
    actions: f.actions,
    direct_hash: f.direct_hash ?? '',
    on_complete_flow_id: f.on_complete_flow_id,
    tm_create: formatRfc3339(f.tm_create),
    tm_update: formatRfc3339(f.tm_update),
    tm_delete: formatRfc3339(f.tm_delete),
  };
}

export function flowDefinition(f: FlowRow): FlowDefinition {
  return { id: f.id, actions: f.actions, on_complete_flow_id: f.on_complete_flow_id };
}

export function flowsRepo(db: Db) {
  const table = () => db('flows');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: FlowCreate): Promise<FlowRow> {
      const row = {
        type: 'flow',
        name: '',
        detail: '',
        on_complete_flow_id: EMPTY_UUID,
        persist: true,
        ...input,
        id: input.id ?? newId(),
        actions: JSON.stringify(input.actions),
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as FlowRow;
    },
    /** A live flow of this customer (other customers' flows are not found). */
    async getOwned(customerId: string, id: string): Promise<FlowRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as FlowRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<FlowRow>> {
      const q = live().where({ customer_id: customerId, persist: true }).select('*');
      return toPage(await paginate<FlowRow>(q, params), (r) => r);
    },
    async update(customerId: string, id: string, patch: FlowPatch): Promise<FlowRow | null> {
      const update: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.actions) update.actions = JSON.stringify(patch.actions);
      const [row] = await live().where({ id, customer_id: customerId }).update(update).returning('*');
      return (row as FlowRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<FlowRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as FlowRow | undefined) ?? null;
    },
  };
}

/**
 * The flow runner's FlowStore (media-app/flow/stores.ts), mirrored structurally: core must not
 * import media-app.
 */
export class PgFlowStore {
  constructor(private readonly db: Db) {}

  async get(id: string, customerId: string): Promise<FlowDefinition | undefined> {
    const q = this.db('flows').whereNull('tm_delete').where({ id });
    if (customerId) q.where({ customer_id: customerId });
    const row = (await q.first()) as FlowRow | undefined;
    return row ? flowDefinition(row) : undefined;
  }
}

/** For core/numbers/flow-refs setFlowExistenceCheck: a live, listed flow of that customer? */
export async function flowExists(db: Db, customerId: string, flowId: string): Promise<boolean> {
  const f = await flowsRepo(db).getOwned(customerId, flowId);
  return !!f && f.persist;
}
