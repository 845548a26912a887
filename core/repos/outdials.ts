/**
 * outdials and their outdialtargets: the target lists campaigns dial. A target has up to five
 * destinations (destination_0..4, null when absent) and a try count per destination; its status is
 * idle (dialable when tries remain), progressing (a campaign call is live) or done.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { DESTINATIONS } from '../campaigns/model';
import type { Address } from './calls';
import type { OutdialRow, OutdialtargetRow } from '../db/rows/outdials';
export type { OutdialRow, OutdialtargetRow } from '../db/rows/outdials';

export function destinationsOf(t: OutdialtargetRow): (Address | null)[] {
  return [t.destination_0, t.destination_1, t.destination_2, t.destination_3, t.destination_4];
}

export function tryCountsOf(t: OutdialtargetRow): number[] {
  return [t.try_count_0, t.try_count_1, t.try_count_2, t.try_count_3, t.try_count_4];
}

export function outdialJson(o: OutdialRow) {
  return {
    id: o.id,
    customer_id: o.customer_id,
    campaign_id: o.campaign_id,
    name: o.name,
    detail: o.detail,
    data: o.data,
    tm_create: formatLegacy(o.tm_create),
    tm_update: formatLegacy(o.tm_update),
    tm_delete: formatLegacy(o.tm_delete),
  };
}

export function outdialtargetJson(t: OutdialtargetRow) {
  return {
    id: t.id,
    outdial_id: t.outdial_id,
    name: t.name,
    detail: t.detail,
    data: t.data,
    status: t.status,
    destination_0: t.destination_0,
    destination_1: t.destination_1,
    destination_2: t.destination_2,
    destination_3: t.destination_3,
    destination_4: t.destination_4,
    try_count_0: t.try_count_0,
    try_count_1: t.try_count_1,
    try_count_2: t.try_count_2,
    try_count_3: t.try_count_3,
    try_count_4: t.try_count_4,
    tm_create: formatLegacy(t.tm_create),
    tm_update: formatLegacy(t.tm_update),
    tm_delete: formatLegacy(t.tm_delete),
  };
}

export interface TargetCreate {
  name: string;
  detail: string;
  data: string;
  destinations: (Address | null)[];
}

export function outdialsRepo(db: Db) {
  const live = () => db('outdials').whereNull('tm_delete');
  const liveTargets = () => db('outdialtargets').whereNull('tm_delete');
  return {
    async create(customerId: string, input: { campaign_id?: string; name: string; detail: string; data: string }): Promise<OutdialRow> {
      const [row] = await db('outdials')
        .insert({ ...input, campaign_id: input.campaign_id ?? EMPTY_UUID, id: newId(), customer_id: customerId, tm_create: clock.now() })
        .returning('*');
      return row as OutdialRow;
    },
    async get(customerId: string, id: string): Promise<OutdialRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as OutdialRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<OutdialRow>> {
      return toPage(await paginate<OutdialRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: Partial<Pick<OutdialRow, 'name' | 'detail' | 'data' | 'campaign_id'>>): Promise<OutdialRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as OutdialRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<OutdialRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      if (row) await liveTargets().where({ outdial_id: id }).update({ tm_delete: now, tm_update: now });
      return (row as OutdialRow | undefined) ?? null;
    },

    async createTarget(outdial: OutdialRow, input: TargetCreate): Promise<OutdialtargetRow> {
      const row: Record<string, unknown> = {
        id: newId(),
        customer_id: outdial.customer_id,
        outdial_id: outdial.id,
        name: input.name,
        detail: input.detail,
        data: input.data,
        status: 'idle',
        tm_create: clock.now(),
      };
      for (let i = 0; i < DESTINATIONS; i++) {
        const d = input.destinations[i];
        row[`destination_${i}`] = d ? JSON.stringify(d) : null;
      }
      const [created] = await db('outdialtargets').insert(row).returning('*');
      return created as OutdialtargetRow;
    },
    async getTarget(outdialId: string, id: string): Promise<OutdialtargetRow | null> {
      return ((await liveTargets().where({ id, outdial_id: outdialId }).first()) as OutdialtargetRow | undefined) ?? null;
    },
    async listTargets(outdialId: string, params: PageParams): Promise<Page<OutdialtargetRow>> {
      return toPage(await paginate<OutdialtargetRow>(liveTargets().where({ outdial_id: outdialId }).select('*'), params), (r) => r);
    },
    async deleteTarget(outdialId: string, id: string): Promise<OutdialtargetRow | null> {
      const now = clock.now();
      const [row] = await liveTargets().where({ id, outdial_id: outdialId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as OutdialtargetRow | undefined) ?? null;
    },
  };
}
