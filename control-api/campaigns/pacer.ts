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
import { campaignRunRepo } from '../../core/repos/campaign-run';

/** Queuecall statuses in which the call has (or had) its agent: it no longer waits for one. */
const WITH_AGENT = ['connecting', 'service', 'done'];

/**
 * Agents a queue could hand a call to now: the same rule the queue uses to claim one (the customer's,
 * available, carrying every tag of the queue, with an address to ring). A queue that is gone has none.
 */
async function availableAgents(trx: Knex.Transaction, c: CampaignRow): Promise<number> {
  const run = campaignRunRepo(trx);
  const queue = await run.queueTags(c.customer_id, c.queue_id);
  if (!queue) return 0;
  return run.availableAgents(c.customer_id, queue.tag_ids ?? []);
}

/** Live attempts of the campaign whose call has no agent yet (dialling, or answered and waiting in the queue). */
async function waitingForAgent(trx: Knex.Transaction, campaignId: string): Promise<number> {
  return campaignRunRepo(trx).waitingForAgent(campaignId, WITH_AGENT);
}

async function sinceLastDialMs(trx: Knex.Transaction, campaignId: string): Promise<number> {
  const last = await campaignRunRepo(trx).lastAttemptAt(campaignId);
  return last ? clock.now().getTime() - new Date(last).getTime() : Infinity;
}

/** How many attempts the campaign may start now. */
export async function paceOf(trx: Knex.Transaction, c: CampaignRow): Promise<Pacing> {
  const live = await campaigncallsRepo(trx).countOngoing(c.id);
  const agents = c.queue_id && c.queue_id !== EMPTY_UUID ? { available: await availableAgents(trx, c), waiting: await waitingForAgent(trx, c.id) } : undefined;
  const since = c.dial_rate > 0 ? await sinceLastDialMs(trx, c.id) : Infinity;
  return pacing({ serviceLevel: c.service_level, live, agents, dialRate: c.dial_rate, sinceLastDialMs: since });
}
