/** numbers: one live owner per number (partial unique index); deletes are soft and free the number. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { NumberRow } from '../db/rows/numbers';
import type { FlowDefinition } from '../flow';
export type { NumberRow, NumberType } from '../db/rows/numbers';

export type NumberCreate = Pick<NumberRow, 'customer_id' | 'number' | 'type'> &
  Partial<Pick<NumberRow, 'provider_id' | 'call_flow_id' | 'message_flow_id' | 'name' | 'detail' | 'tm_purchase' | 'tm_renew'>>;

export function numberJson(n: NumberRow) {
  return {
    id: n.id,
    customer_id: n.customer_id,
    number: n.number,
    type: n.type,
    call_flow_id: n.call_flow_id,
    message_flow_id: n.message_flow_id,
    name: n.name,
    detail: n.detail,
    status: n.status,
    t38_enabled: n.t38_enabled,
    emergency_enabled: n.emergency_enabled,
    metadata: { rtp_debug: false, ...(n.metadata ?? {}) },
    tm_purchase: formatLegacy(n.tm_purchase),
    tm_renew: formatLegacy(n.tm_renew),
    tm_create: formatLegacy(n.tm_create),
    tm_update: formatLegacy(n.tm_update),
    tm_delete: formatLegacy(n.tm_delete),
  };
}

export function numbersRepo(db: Db) {
  const table = () => db('numbers');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: NumberCreate): Promise<NumberRow> {
      const row = {
        provider_id: EMPTY_UUID,
        call_flow_id: EMPTY_UUID,
        message_flow_id: EMPTY_UUID,
        name: '',
        detail: '',
        ...input,
        id: newId(),
        status: 'active' as const,
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as NumberRow;
    },
    async getOwned(customerId: string, id: string): Promise<NumberRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as NumberRow | undefined) ?? null;
    },
    /** The live row of a number (inbound routing: dialled number -> call_flow_id). */
    async getByNumber(number: string): Promise<NumberRow | null> {
      return ((await live().where({ number }).first()) as NumberRow | undefined) ?? null;
    },
    /**
     * The number with its call flow read in the same statement (an inbound call's start: one round trip
     * less before its flow runs): `call_flow` is the live flow of the number's customer it names, else null.
     */
    async getByNumberWithFlow(number: string): Promise<(NumberRow & { call_flow: FlowDefinition | null }) | null> {
      const flow = db('flows as f')
        .select(db.raw("jsonb_build_object('id', f.id, 'actions', f.actions, 'on_complete_flow_id', f.on_complete_flow_id)"))
        .whereRaw('f.id = numbers.call_flow_id and f.customer_id = numbers.customer_id')
        .whereNull('f.tm_delete')
        .as('call_flow');
      return ((await live().where({ number }).select('numbers.*', flow).first()) as (NumberRow & { call_flow: FlowDefinition | null }) | undefined) ?? null;
    },
    /** Which of `numbers` have a live owner. */
    async taken(numbers: string[]): Promise<Set<string>> {
      if (numbers.length === 0) return new Set();
      const rows = (await live().whereIn('number', numbers).select('number')) as { number: string }[];
      return new Set(rows.map((r) => r.number));
    },
    async update(id: string, patch: Partial<Pick<NumberRow, 'call_flow_id' | 'message_flow_id' | 'name' | 'detail' | 'tm_renew' | 'metadata'>>): Promise<NumberRow | null> {
      const values: Record<string, unknown> = { ...patch, tm_update: clock.now() };
      if (patch.metadata) values.metadata = JSON.stringify(patch.metadata);
      const [row] = await live().where({ id }).update(values).returning('*');
      return (row as NumberRow | undefined) ?? null;
    },
    async softDelete(id: string): Promise<NumberRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id }).update({ status: 'deleted', tm_delete: now, tm_update: now }).returning('*');
      return (row as NumberRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<NumberRow>> {
      const q = live().where({ customer_id: customerId }).select('*');
      return toPage(await paginate<NumberRow>(q, params), (r) => r);
    },
    /** Normal numbers of the customer due for renewal at `before` (renewed last, or bought, before it). */
    async dueForRenewal(customerId: string, before: Date, ids?: string[]): Promise<NumberRow[]> {
      const q = live().where({ customer_id: customerId, type: 'normal' }).whereRaw('coalesce(tm_renew, tm_purchase, tm_create) <= ?', [before]);
      if (ids) q.whereIn('id', ids);
      return (await q.orderBy('tm_create', 'asc').forUpdate()) as NumberRow[];
    },
  };
}

/** Whether `id` is an active, live `normal` number of the customer (false while the numbers table does not exist). */
export async function activeNormalNumberExists(db: Db, customerId: string, id: string): Promise<boolean> {
  if (!(await db.schema.hasTable('numbers'))) return false;
  return !!(await db('numbers').where({ id, customer_id: customerId, status: 'active', type: 'normal' }).whereNull('tm_delete').first());
}
