/**
 * queuecalls: one caller's stay in a queue. Status moves only forward through guarded updates
 * (`transition`), so two writers (the dispatcher and a kick) never both win one change.
 *
 *   initiating → waiting ⇄ connecting → service → done
 *   initiating | waiting | connecting → abandoned;  any live status → kicking → done | abandoned
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { QueuecallRow, QueuecallStatus } from '../db/rows/queuecalls';
export { QUEUECALL_STATUSES, type QueuecallRow, type QueuecallStatus } from '../db/rows/queuecalls';
export const LIVE_QUEUECALL: readonly QueuecallStatus[] = ['initiating', 'waiting', 'connecting', 'kicking', 'service'];

/** A caller waiting in its queue (not yet served): Twilio's queue members. */
const WAITING: QueuecallStatus[] = ['initiating', 'waiting', 'connecting'];

/** Statuses a queuecall may move to from each status. */
const NEXT: Record<QueuecallStatus, readonly QueuecallStatus[]> = {
  initiating: ['waiting', 'abandoned', 'kicking'],
  waiting: ['connecting', 'abandoned', 'kicking'],
  connecting: ['waiting', 'service', 'abandoned', 'kicking'],
  service: ['done', 'kicking'],
  kicking: ['done', 'abandoned'],
  done: [],
  abandoned: [],
};

export function queuecallJson(q: QueuecallRow) {
  return {
    id: q.id,
    customer_id: q.customer_id,
    queue_id: q.queue_id,
    reference_type: q.reference_type,
    reference_id: q.reference_id,
    reference_activeflow_id: q.reference_activeflow_id,
    status: q.status,
    service_agent_id: q.service_agent_id,
    timeout_wait: q.timeout_wait,
    timeout_service: q.timeout_service,
    duration_waiting: q.duration_waiting,
    duration_service: q.duration_service,
    tm_create: formatLegacy(q.tm_create),
    tm_service: formatLegacy(q.tm_service),
    tm_end: formatLegacy(q.tm_end),
    tm_update: formatLegacy(q.tm_update),
    tm_delete: formatLegacy(q.tm_delete),
  };
}

export function queuecallsRepo(db: Db) {
  const table = () => db('queuecalls');
  return {
    async create(input: Pick<QueuecallRow, 'customer_id' | 'queue_id' | 'reference_id'> & Partial<QueuecallRow>): Promise<QueuecallRow> {
      const [row] = await table()
        .insert({ reference_type: 'call', reference_activeflow_id: EMPTY_UUID, ...input, id: input.id ?? newId(), status: 'initiating', tm_create: clock.now() })
        .returning('*');
      return row as QueuecallRow;
    },
    /**
     * `create`, unless `max` callers already wait in the queue (initiating, waiting, connecting): null
     * then. The queue's row is locked meanwhile, so joins racing for the last place count each other.
     */
    async createWithin(max: number, input: Pick<QueuecallRow, 'customer_id' | 'queue_id' | 'reference_id'> & Partial<QueuecallRow>): Promise<QueuecallRow | null> {
      return db.transaction(async (trx) => {
        await trx('queues').where({ id: input.queue_id }).forUpdate().first('id');
        const [row] = (await trx('queuecalls').whereNull('tm_delete').where({ queue_id: input.queue_id }).whereIn('status', WAITING).count({ n: '*' })) as { n: string }[];
        if (Number(row?.n ?? 0) >= max) return null;
        return queuecallsRepo(trx).create(input);
      });
    },
    async get(customerId: string | null, id: string, opts: { includeDeleted?: boolean } = {}): Promise<QueuecallRow | null> {
      const q = table().where({ id });
      if (customerId) q.where({ customer_id: customerId });
      if (!opts.includeDeleted) q.whereNull('tm_delete');
      return ((await q.first()) as QueuecallRow | undefined) ?? null;
    },
    /** The live queuecall of a call, if it is in a queue. */
    async liveByReference(customerId: string, referenceId: string): Promise<QueuecallRow | null> {
      const row = await table()
        .where({ customer_id: customerId, reference_id: referenceId })
        .whereIn('status', LIVE_QUEUECALL as QueuecallStatus[])
        .whereNull('tm_delete')
        .first();
      return (row as QueuecallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, filter: { queueId?: string; status?: QueuecallStatus } = {}): Promise<Page<QueuecallRow>> {
      const q = table().where({ customer_id: customerId }).whereNull('tm_delete').select('*');
      if (filter.queueId) q.where({ queue_id: filter.queueId });
      if (filter.status) q.where({ status: filter.status });
      return toPage(await paginate<QueuecallRow>(q, params), (r) => r);
    },
    /** Ids of the queue's waiting (waiting, connecting) and service queuecalls. */
    async liveIds(queueId: string): Promise<{ wait: string[]; service: string[] }> {
      const rows = (await table().where({ queue_id: queueId }).whereIn('status', ['initiating', 'waiting', 'connecting', 'service']).orderBy('tm_create').select('id', 'status')) as Pick<
        QueuecallRow,
        'id' | 'status'
      >[];
      return { wait: rows.filter((r) => r.status !== 'service').map((r) => r.id), service: rows.filter((r) => r.status === 'service').map((r) => r.id) };
    },
    /** The queue's live callers not yet with an agent (initiating, waiting, connecting), in the order they came. */
    async waitingIn(queueId: string): Promise<QueuecallRow[]> {
      return (await table().whereNull('tm_delete').where({ queue_id: queueId }).whereIn('status', WAITING).orderBy('tm_create', 'asc').orderBy('id', 'asc')) as QueuecallRow[];
    },
    /**
     * Moves to `to` when the current status allows it (and is one of `from`, when given); sets the
     * extra fields in the same write. Null when nothing changed.
     */
    async transition(id: string, to: QueuecallStatus, extra: Partial<QueuecallRow> = {}, from?: readonly QueuecallStatus[]): Promise<QueuecallRow | null> {
      const allowed = (Object.keys(NEXT) as QueuecallStatus[]).filter((s) => NEXT[s].includes(to) && (!from || from.includes(s)));
      if (!allowed.length) return null;
      const [row] = await table()
        .where({ id })
        .whereIn('status', allowed)
        .update({ ...extra, status: to, tm_update: clock.now() })
        .returning('*');
      return (row as QueuecallRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<QueuecallRow | null> {
      const now = clock.now();
      const [row] = await table().where({ id, customer_id: customerId }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as QueuecallRow | undefined) ?? null;
    },
  };
}
export type QueuecallsRepo = ReturnType<typeof queuecallsRepo>;

/** Callers waiting in every customer's queues (the queuecalls_waiting gauge). */
export async function countWaitingQueuecalls(db: Db): Promise<number> {
  const r = (await db.raw(`SELECT count(*)::int AS n FROM queuecalls WHERE status = 'waiting' AND tm_delete IS NULL`)) as { rows: { n: number }[] };
  return r.rows[0]?.n ?? 0;
}
