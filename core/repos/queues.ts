/** queues: routing settings, wait flow, timeouts (ms) and counters; JSON view adds the live queuecall ids. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { QueueRow, RoutingMethod } from '../db/rows/queues';
export { type QueueRow, ROUTING_METHODS, type RoutingMethod } from '../db/rows/queues';

export interface QueueFields {
  name?: string;
  detail?: string;
  routing_method?: RoutingMethod;
  tag_ids?: string[];
  wait_flow_id?: string;
  wait_timeout?: number;
  service_timeout?: number;
  direct_hash?: string;
  max_size?: number | null;
}

/** Twilio's default MaxSize (a queue made by Queues create without one, or by <Enqueue>name). */
export const TWILIO_QUEUE_MAX_SIZE = 1000;

export function queueJson(q: QueueRow, live: { wait: string[]; service: string[] } = { wait: [], service: [] }) {
  return {
    id: q.id,
    customer_id: q.customer_id,
    name: q.name,
    detail: q.detail,
    routing_method: q.routing_method,
    tag_ids: q.tag_ids ?? [],
    direct_hash: q.direct_hash,
    wait_flow_id: q.wait_flow_id,
    wait_timeout: q.wait_timeout,
    service_timeout: q.service_timeout,
    wait_queuecall_ids: live.wait,
    service_queuecall_ids: live.service,
    total_incoming_count: q.total_incoming_count,
    total_serviced_count: q.total_serviced_count,
    total_abandoned_count: q.total_abandoned_count,
    tm_create: formatLegacy(q.tm_create),
    tm_update: formatLegacy(q.tm_update),
    tm_delete: formatLegacy(q.tm_delete),
  };
}

export type QueueCounter = 'total_incoming_count' | 'total_serviced_count' | 'total_abandoned_count';

export function queuesRepo(db: Db) {
  const table = () => db('queues');
  const encode = (f: QueueFields): Record<string, unknown> => (f.tag_ids ? { ...f, tag_ids: JSON.stringify(f.tag_ids) } : { ...f });
  return {
    async create(customerId: string, f: QueueFields): Promise<QueueRow> {
      const row = { wait_flow_id: EMPTY_UUID, ...encode({ tag_ids: [], ...f }), id: newId(), customer_id: customerId, tm_create: clock.now() };
      const [created] = await table().insert(row).returning('*');
      return created as QueueRow;
    },
    /**
     * The customer's live queue named `name` (the oldest when several), or a new one made by the name
     * (routing random, no wait flow, no timeouts). Racing makers meet at queues_made_name_uq.
     */
    async namedOrCreate(customerId: string, name: string): Promise<{ queue: QueueRow; created: boolean }> {
      for (let attempt = 0; attempt < 5; attempt++) {
        const found = (await table().where({ customer_id: customerId, name }).whereNull('tm_delete').orderBy('tm_create', 'asc').orderBy('id', 'asc').first()) as QueueRow | undefined;
        if (found) return { queue: found, created: false };
        const row = {
          wait_flow_id: EMPTY_UUID,
          ...encode({ tag_ids: [], name, routing_method: 'random', max_size: TWILIO_QUEUE_MAX_SIZE }),
          made_by_name: true,
          id: newId(),
          customer_id: customerId,
          tm_create: clock.now(),
        };
        const [created] = (await table().insert(row).onConflict().ignore().returning('*')) as QueueRow[];
        if (created) return { queue: created, created: true };
      }
      throw new Error(`queue "${name}" could not be found or made`);
    },
    /** A live queue of the customer (or any customer's when customerId is null). */
    async get(customerId: string | null, id: string): Promise<QueueRow | null> {
      const q = table().where({ id }).whereNull('tm_delete');
      if (customerId) q.where({ customer_id: customerId });
      return ((await q.first()) as QueueRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<QueueRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      return toPage(await paginate<QueueRow>(q, params), (r) => r);
    },
    async update(customerId: string, id: string, f: QueueFields): Promise<QueueRow | null> {
      const [row] = await table()
        .where({ id, customer_id: customerId })
        .whereNull('tm_delete')
        .update({ ...encode(f), tm_update: clock.now() })
        .returning('*');
      return (row as QueueRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<QueueRow | null> {
      const now = clock.now();
      const [row] = await table().where({ id, customer_id: customerId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as QueueRow | undefined) ?? null;
    },
    async bump(id: string, counter: QueueCounter): Promise<void> {
      await table().where({ id }).increment(counter, 1);
    },
  };
}
export type QueuesRepo = ReturnType<typeof queuesRepo>;

/** Whether the customer has this live queue (false while the queues table does not exist). */
export async function liveQueueExists(db: Db, customerId: string, id: string): Promise<boolean> {
  return (await db.schema.hasTable('queues')) && !!(await db('queues').where({ id, customer_id: customerId }).whereNull('tm_delete').first('id'));
}
