/**
 * The campaign runner's reads and writes (control-api/campaigns/), all inside the transaction that
 * steps one campaign with its row locked: the campaign, its outplan and outdial, the Call row of an
 * attempt, the outdial targets it dials (due, with a try left) and the counts it is paced by.
 */
import type { Knex } from '../db/knex';
import { DESTINATIONS } from '../campaigns/model';
import type { CallRow } from './calls';
import type { CampaignRow } from './campaigns';
import { maxTryCounts, type OutplanRow } from './outplans';
import type { OutdialtargetRow } from './outdials';

/** What the runner reads of an attempt's Call row. */
export type AttemptCall = Pick<CallRow, 'id' | 'status' | 'hangup_reason' | 'node_id' | 'tm_create' | 'tm_progressing' | 'tm_hangup' | 'activeflow_id'>;

/** Targets with a try left on some destination of the outplan. */
function triesLeft(q: Knex.QueryBuilder, plan: OutplanRow): void {
  const max = maxTryCounts(plan);
  q.where((w) => {
    for (let i = 0; i < DESTINATIONS; i++) {
      w.orWhere((x) => void x.whereNotNull(`destination_${i}`).where(`try_count_${i}`, '<', max[i]!));
    }
  });
}

export function campaignRunRepo(trx: Knex.Transaction) {
  return {
    /** The live campaign, locked; undefined when gone or another runner holds it (skip locked). */
    async lockForStep(id: string): Promise<CampaignRow | undefined> {
      return (await trx<CampaignRow>('campaigns').where({ id }).whereNull('tm_delete').forUpdate().skipLocked().first()) as CampaignRow | undefined;
    },
    /** The customer's live campaign, locked (waits for a runner's step). */
    async lockOwned(customerId: string, id: string): Promise<CampaignRow | undefined> {
      return (await trx<CampaignRow>('campaigns').where({ id, customer_id: customerId }).whereNull('tm_delete').forUpdate().first()) as CampaignRow | undefined;
    },
    /** The outplan, deleted or not. */
    async outplan(id: string): Promise<OutplanRow | null> {
      return ((await trx<OutplanRow>('outplans').where({ id }).first()) as OutplanRow | undefined) ?? null;
    },
    async outdialIsLive(id: string): Promise<boolean> {
      return !!(await trx('outdials').where({ id }).whereNull('tm_delete').first('id'));
    },
    async attemptCall(id: string): Promise<AttemptCall | undefined> {
      return (await trx<CallRow>('calls').where({ id }).first('id', 'status', 'hangup_reason', 'node_id', 'tm_create', 'tm_progressing', 'tm_hangup', 'activeflow_id')) as AttemptCall | undefined;
    },
    /** The next idle target of the outdial that is due (at `now`) and has a try left, locked (skip locked). */
    async dueTarget(outdialId: string, plan: OutplanRow, now: Date): Promise<OutdialtargetRow | null> {
      const q = trx<OutdialtargetRow>('outdialtargets')
        .where({ outdial_id: outdialId, status: 'idle' })
        .whereNull('tm_delete')
        .where((w) => void w.whereNull('tm_next_try').orWhere('tm_next_try', '<=', now));
      triesLeft(q, plan);
      const row = await q
        .orderBy([{ column: 'tm_create' }, { column: 'id' }])
        .forUpdate()
        .skipLocked()
        .first();
      return (row as OutdialtargetRow | undefined) ?? null;
    },
    /** Any idle or progressing target of the outdial with a try left, due or not. */
    async anyTriesLeft(outdialId: string, plan: OutplanRow): Promise<boolean> {
      const q = trx('outdialtargets').where({ outdial_id: outdialId }).whereIn('status', ['idle', 'progressing']).whereNull('tm_delete');
      triesLeft(q, plan);
      return !!(await q.first('id'));
    },
    async lockTarget(id: string): Promise<OutdialtargetRow | undefined> {
      return (await trx<OutdialtargetRow>('outdialtargets').where({ id }).forUpdate().first()) as OutdialtargetRow | undefined;
    },
    /** A finished attempt's target: idle again from `nextTry` (a retry), or done. */
    async settleTarget(id: string, now: Date, nextTry: Date | null): Promise<void> {
      await trx('outdialtargets')
        .where({ id })
        .update(nextTry ? { status: 'idle', tm_next_try: nextTry, tm_update: now } : { status: 'done', tm_update: now });
    },
    /** Spends a try of destination `index` (its count becomes `tryCount`): the target is progressing. */
    async spendTry(id: string, index: number, tryCount: number, now: Date): Promise<void> {
      await trx('outdialtargets')
        .where({ id })
        .update({ [`try_count_${index}`]: tryCount, status: 'progressing', tm_update: now });
    },
    /** Gives back the try just spent (its count back to `tryCount`): the target is idle again. */
    async returnTry(id: string, index: number, tryCount: number): Promise<void> {
      await trx('outdialtargets')
        .where({ id })
        .update({ [`try_count_${index}`]: tryCount, status: 'idle' });
    },
    /** The tags of the customer's live queue; undefined when it is gone. */
    async queueTags(customerId: string, queueId: string): Promise<{ tag_ids: string[] } | undefined> {
      return (await trx('queues').where({ id: queueId, customer_id: customerId }).whereNull('tm_delete').first('tag_ids')) as { tag_ids: string[] } | undefined;
    },
    /** The customer's available live agents carrying every one of `tagIds`, with an address to ring. */
    async availableAgents(customerId: string, tagIds: string[]): Promise<number> {
      const r = (await trx.raw(
        `SELECT count(*)::int AS n FROM agents
          WHERE customer_id = ? AND status = 'available' AND tm_delete IS NULL
            AND tag_ids @> ?::jsonb AND jsonb_array_length(addresses) > 0`,
        [customerId, JSON.stringify(tagIds)],
      )) as { rows: { n: number }[] };
      return r.rows[0]?.n ?? 0;
    },
    /** Live attempts of the campaign whose call is in no queuecall of the statuses `withAgent`. */
    async waitingForAgent(campaignId: string, withAgent: string[]): Promise<number> {
      const r = (await trx.raw(
        `SELECT count(*)::int AS n FROM campaigncalls cc
          WHERE cc.campaign_id = ? AND cc.status <> 'done'
            AND NOT EXISTS (SELECT 1 FROM queuecalls q WHERE q.reference_id = cc.reference_id AND q.status = ANY(?))`,
        [campaignId, withAgent],
      )) as { rows: { n: number }[] };
      return r.rows[0]?.n ?? 0;
    },
    /** When the campaign's last attempt was made, or null. */
    async lastAttemptAt(campaignId: string): Promise<Date | null> {
      const r = (await trx('campaigncalls').where({ campaign_id: campaignId }).max('tm_create as last').first()) as { last: Date | null } | undefined;
      return r?.last ?? null;
    },
  };
}
