/**
 * groupcalls: rows media-app writes while it rings a group. Status changes are guarded UPDATEs (only
 * from an allowed predecessor), so a repeated command changes nothing and reports `changed: false`.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { groupcallPredecessorsOf, type GroupcallStatus } from '../groupcalls/model';
import type { GroupcallRow } from '../db/rows/groupcalls';
export type { GroupcallRow } from '../db/rows/groupcalls';

export type GroupcallCreate = Pick<GroupcallRow, 'customer_id' | 'source' | 'destinations' | 'ring_method' | 'answer_method'> &
  Partial<Pick<GroupcallRow, 'id' | 'flow_id' | 'master_call_id' | 'call_ids' | 'call_count' | 'data' | 'owner_id' | 'owner_type'>>;

/** The Groupcall as the API and its events show it (RFC 3339 timestamps, like calls). */
export function groupcallJson(g: GroupcallRow) {
  return {
    id: g.id,
    customer_id: g.customer_id,
    owner_type: g.owner_type,
    owner_id: g.owner_id,
    status: g.status,
    flow_id: g.flow_id,
    source: g.source,
    destinations: g.destinations,
    master_call_id: g.master_call_id,
    master_groupcall_id: g.master_groupcall_id,
    ring_method: g.ring_method,
    answer_method: g.answer_method,
    answer_call_id: g.answer_call_id,
    call_ids: g.call_ids,
    answer_groupcall_id: g.answer_groupcall_id,
    groupcall_ids: g.groupcall_ids,
    call_count: g.call_count,
    groupcall_count: g.groupcall_count,
    dial_index: g.dial_index,
    tm_create: formatRfc3339(g.tm_create),
    tm_update: formatRfc3339(g.tm_update),
    tm_delete: formatRfc3339(g.tm_delete),
  };
}

export interface GroupcallTransition {
  changed: boolean;
  row: GroupcallRow | null;
}

export function groupcallsRepo(db: Db) {
  const table = () => db('groupcalls');
  const live = () => table().whereNull('tm_delete');
  return {
    async create(input: GroupcallCreate): Promise<GroupcallRow> {
      const row = {
        id: input.id ?? newId(),
        owner_id: EMPTY_UUID,
        owner_type: '',
        status: 'progressing' as const,
        flow_id: EMPTY_UUID,
        master_call_id: EMPTY_UUID,
        master_groupcall_id: EMPTY_UUID,
        answer_call_id: EMPTY_UUID,
        answer_groupcall_id: EMPTY_UUID,
        call_ids: [],
        call_count: 0,
        data: {},
        ...input,
        source: JSON.stringify(input.source),
        destinations: JSON.stringify(input.destinations),
        tm_create: clock.now(),
      };
      const [created] = await table().insert(row).returning('*');
      return created as GroupcallRow;
    },
    async get(id: string): Promise<GroupcallRow | null> {
      return ((await table().where({ id }).first()) as GroupcallRow | undefined) ?? null;
    },
    async getOwned(customerId: string, id: string): Promise<GroupcallRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as GroupcallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<GroupcallRow>> {
      const q = live().where({ customer_id: customerId }).select('*');
      return toPage(await paginate<GroupcallRow>(q, params), (r) => r);
    },
    async transition(id: string, to: GroupcallStatus): Promise<GroupcallTransition> {
      const [row] = await table().where({ id }).whereIn('status', groupcallPredecessorsOf(to)).update({ status: to, tm_update: clock.now() }).returning('*');
      if (row) return { changed: true, row: row as GroupcallRow };
      return { changed: false, row: await this.get(id) };
    },
    async update(id: string, patch: Partial<Pick<GroupcallRow, 'answer_call_id' | 'call_count' | 'dial_index' | 'node_id'>>): Promise<GroupcallRow | null> {
      const [row] = await table()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as GroupcallRow | undefined) ?? null;
    },
    /** Records the first answer only: a later answer (a race) finds answer_call_id already set. */
    async claimAnswer(id: string, callId: string): Promise<boolean> {
      const n = await table().where({ id, answer_call_id: EMPTY_UUID }).update({ answer_call_id: callId, tm_update: clock.now() });
      return Number(n) > 0;
    },
    async addCall(id: string, callId: string): Promise<void> {
      await table()
        .where({ id })
        .update({ call_ids: db.raw('array_append(call_ids, ?)', [callId]), tm_update: clock.now() });
    },
    async softDelete(id: string): Promise<GroupcallRow | null> {
      const now = clock.now();
      const [row] = await table().where({ id }).whereNull('tm_delete').update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as GroupcallRow | undefined) ?? null;
    },
  };
}
