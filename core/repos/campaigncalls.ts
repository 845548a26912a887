/** campaigncalls: one per dial attempt of a campaign (status dialing → progressing → done, result success/fail). */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { CampaigncallResult, CampaigncallStatus } from '../campaigns/model';

import type { Outcome } from '../campaigns/dialplan';
import type { CampaigncallRow } from '../db/rows/campaigncalls';
export type { CampaigncallRow } from '../db/rows/campaigncalls';

export type CampaigncallCreate = Omit<CampaigncallRow, 'tm_create' | 'tm_update' | 'tm_delete' | 'result_reason' | 'amd_result'>;

export function campaigncallJson(c: CampaigncallRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    campaign_id: c.campaign_id,
    outplan_id: c.outplan_id,
    outdial_id: c.outdial_id,
    outdial_target_id: c.outdial_target_id,
    queue_id: c.queue_id,
    activeflow_id: c.activeflow_id,
    flow_id: c.flow_id,
    reference_type: c.reference_type,
    reference_id: c.reference_id,
    status: c.status,
    result: c.result,
    source: c.source,
    destination: c.destination,
    destination_index: c.destination_index,
    try_count: c.try_count,
    result_reason: c.result_reason,
    amd_result: c.amd_result,
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

export function campaigncallsRepo(db: Db) {
  const live = () => db('campaigncalls').whereNull('tm_delete');
  return {
    async create(input: CampaigncallCreate): Promise<CampaigncallRow> {
      const [row] = await db('campaigncalls')
        .insert({ ...input, source: JSON.stringify(input.source), destination: JSON.stringify(input.destination), tm_create: clock.now() })
        .returning('*');
      return row as CampaigncallRow;
    },
    async get(customerId: string, id: string): Promise<CampaigncallRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as CampaigncallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams, campaignId?: string): Promise<Page<CampaigncallRow>> {
      const q = live().where({ customer_id: customerId });
      if (campaignId) q.where({ campaign_id: campaignId });
      return toPage(await paginate<CampaigncallRow>(q.select('*'), params), (r) => r);
    },
    /** Not done yet: the campaign's live calls (counted against service_level). */
    async ongoing(campaignId: string): Promise<CampaigncallRow[]> {
      return (await db('campaigncalls').where({ campaign_id: campaignId }).whereNot({ status: 'done' }).select('*')) as CampaigncallRow[];
    },
    async countOngoing(campaignId: string): Promise<number> {
      const r = await db('campaigncalls').where({ campaign_id: campaignId }).whereNot({ status: 'done' }).count<{ count: string }[]>('id as count');
      return Number(r[0]?.count ?? 0);
    },
    /** Guarded: only from `from`, so a repeated reconcile writes (and publishes) nothing twice. */
    async advance(
      id: string,
      from: CampaigncallStatus[],
      patch: { status: CampaigncallStatus; result?: CampaigncallResult; result_reason?: Outcome; amd_result?: string },
    ): Promise<CampaigncallRow | null> {
      const [row] = await db('campaigncalls')
        .where({ id })
        .whereIn('status', from)
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (row as CampaigncallRow | undefined) ?? null;
    },
    async softDelete(customerId: string, id: string): Promise<CampaigncallRow | null> {
      const now = clock.now();
      const [row] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (row as CampaigncallRow | undefined) ?? null;
    },
  };
}
