/**
 * The counts the runner paces a campaign with (core/campaigns/pacing.ts decides): its live attempts,
 * for a campaign with a queue the queue's available agents and the attempts still waiting for one,
 * and when its last attempt started. Read inside the runner's transaction.
 */
import type { Knex } from 'knex';
import { clock } from '../../core/clock';
import { EMPTY_UUID } from '../../core/ids';
import type { CampaignRow } from '../../core/repos/campaigns';
import { campaigncallsRepo } from '../../core/repos/campaigncalls';
import { pacing, type Pacing } from '../../core/campaigns/pacing';

/** Queuecall statuses in which the call has (or had) its agent: it no longer waits for one. */
const WITH_AGENT = ['connecting', 'service', 'done'];

/**
 * Agents a queue could hand a call to now: the same rule the queue uses to claim one (the customer's,
 * available, carrying every tag of the queue, with an address to ring). A queue that is gone has none.
 */
async function availableAgents(trx: Knex.Transaction, c: CampaignRow): Promise<number> {
  const queue = (await trx('queues').where({ id: c.queue_id, customer_id: c.customer_id }).whereNull('tm_delete').first('tag_ids')) as { tag_ids: string[] } | undefined;
  if (!queue) return 0;
  const r = (await trx.raw(
    `SELECT count(*)::int AS n FROM agents
      WHERE customer_id = ? AND status = 'available' AND tm_delete IS NULL
        AND tag_ids @> ?::jsonb AND jsonb_array_length(addresses) > 0`,
    [c.customer_id, JSON.stringify(queue.tag_ids ?? [])],
  )) as { rows: { n: number }[] };
  return r.rows[0]?.n ?? 0;
}

/** Live attempts of the campaign whose call has no agent yet (dialling, or answered and waiting in the queue). */
async function waitingForAgent(trx: Knex.Transaction, campaignId: string): Promise<number> {
  const r = (await trx.raw(
    `SELECT count(*)::int AS n FROM campaigncalls cc
      WHERE cc.campaign_id = ? AND cc.status <> 'done'
        AND NOT EXISTS (SELECT 1 FROM queuecalls q WHERE q.reference_id = cc.reference_id AND q.status = ANY(?))`,
    [campaignId, WITH_AGENT],
  )) as { rows: { n: number }[] };
  return r.rows[0]?.n ?? 0;
}

async function sinceLastDialMs(trx: Knex.Transaction, campaignId: string): Promise<number> {
  const r = (await trx('campaigncalls').where({ campaign_id: campaignId }).max('tm_create as last').first()) as { last: Date | null } | undefined;
  return r?.last ? clock.now().getTime() - new Date(r.last).getTime() : Infinity;
}

/** How many attempts the campaign may start now. */
export async function paceOf(trx: Knex.Transaction, c: CampaignRow): Promise<Pacing> {
  const live = await campaigncallsRepo(trx).countOngoing(c.id);
  const agents = c.queue_id && c.queue_id !== EMPTY_UUID ? { available: await availableAgents(trx, c), waiting: await waitingForAgent(trx, c.id) } : undefined;
  const since = c.dial_rate > 0 ? await sinceLastDialMs(trx, c.id) : Infinity;
  return pacing({ serviceLevel: c.service_level, live, agents, dialRate: c.dial_rate, sinceLastDialMs: since });
}
