/** campaigns: a run of an outdial with an outplan, paced by service_level (see core/campaigns/model.ts). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';

import type { CampaignStatus } from '../campaigns/model';
import type { CampaignRow } from '../db/rows/campaigns';
export type { CampaignAmd, CampaignRow } from '../db/rows/campaigns';
export type CampaignCreate = Pick<
  CampaignRow,
  'type' | 'name' | 'detail' | 'service_level' | 'end_handle' | 'actions' | 'flow_id' | 'outplan_id' | 'outdial_id' | 'queue_id' | 'next_campaign_id' | 'amd' | 'dial_rate'
>;
export type CampaignPatch = Partial<CampaignCreate>;

export function campaignJson(c: CampaignRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    type: c.type,
    name: c.name,
    detail: c.detail,
    status: c.status,
    service_level: c.service_level,
    end_handle: c.end_handle,
    actions: c.actions,
    outplan_id: c.outplan_id,
    outdial_id: c.outdial_id,
    queue_id: c.queue_id,
    next_campaign_id: c.next_campaign_id,
    amd: c.amd ?? null,
    dial_rate: c.dial_rate,
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

function encode(patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = patch.actions !== undefined ? { ...patch, actions: JSON.stringify(patch.actions) } : { ...patch };
  if (patch.amd !== undefined) out.amd = patch.amd === null ? null : JSON.stringify(patch.amd);
  return out;
}

export function campaignsRepo(db: Db) {
  const live = () => db('campaigns').whereNull('tm_delete');
  return {
    async create(customerId: string, input: CampaignCreate): Promise<CampaignRow> {
      const [row] = await db('campaigns')
        .insert(encode({ ...input, id: newId(), customer_id: customerId, status: 'stop', tm_create: clock.now() }))
        .returning('*');
      return row as CampaignRow;
    },
    async get(customerId: string, id: string): Promise<CampaignRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as CampaignRow | undefined) ?? null;
    },
    async getById(id: string): Promise<CampaignRow | null> {
      return ((await live().where({ id }).first()) as CampaignRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<CampaignRow>> {
      return toPage(await paginate<CampaignRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: CampaignPatch): Promise<CampaignRow | null> {
      const [row] = await live()
        .where({ id, customer_id: customerId })
        .update(encode({ ...patch, tm_update: clock.now() }))
        .returning('*');
      return (row as CampaignRow | undefined) ?? null;
    },
    /** Moves the status only from `from` (a guarded write: two copies cannot both make the same move). */
    async setStatus(id: string, from: CampaignStatus[], to: CampaignStatus): Promise<CampaignRow | null> {
      const [row] = await live().where({ id }).whereIn('status', from).update({ status: to, tm_update: clock.now() }).returning('*');
      return (row as CampaignRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<CampaignRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as CampaignRow | undefined) ?? null;
    },
    /** Live campaigns that use this outdial or outplan and are not stopped (they may not lose it). */
    async activeUsing(customerId: string, field: 'outdial_id' | 'outplan_id', id: string): Promise<number> {
      const r = await live()
        .where({ customer_id: customerId, [field]: id })
        .whereNot({ status: 'stop' })
        .count<{ count: string }[]>('id as count');
      return Number(r[0]?.count ?? 0);
    },
    /** Ids of every campaign the runner has work for: run or stopping, or a live campaign call to follow. */
    async activeIds(): Promise<string[]> {
      const rows = (await live()
        .where(
          (w) =>
            void w
              .whereIn('status', ['run', 'stopping'])
              .orWhereExists(db('campaigncalls').whereRaw('campaigncalls.campaign_id = campaigns.id').whereNot('campaigncalls.status', 'done').select(db.raw('1'))),
        )
        .select('id')) as { id: string }[];
      return rows.map((r) => r.id);
    },
  };
}
