/**
 * One dial attempt of a campaign, written inside the runner's transaction: the target's try count,
 * the campaigncall and, for a call campaign, the Call row exactly as POST /calls writes it (the same
 * planLegs checks: whitelist, source number, balance); for a flow campaign an activeflow with
 * reference_type campaign. What must happen after commit (originate, activeflow start, events) is
 * collected in an Outbox the runner flushes.
 */
import type { Knex } from 'knex';
import { EMPTY_UUID, newId } from '../../core/ids';
import { clock } from '../../core/clock';
import { isApiError } from '../../core/errors';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { activeflowsRepo } from '../../core/repos/activeflows';
import { storedActiveflowRow } from '../../core/flow/stored-activeflow';
import { campaigncallsRepo, campaigncallJson, type CampaigncallRow } from '../../core/repos/campaigncalls';
import { destinationsOf, tryCountsOf, type OutdialtargetRow } from '../../core/repos/outdials';
import { maxTryCounts, type OutplanRow } from '../../core/repos/outplans';
import type { CampaignRow } from '../../core/repos/campaigns';
import { nextDestination, type CampaigncallResult } from '../../core/campaigns/model';
import { retryDelay, type Outcome } from '../../core/campaigns/dialplan';
import type { EventType, ResourcePayload } from '../../core/events/catalogue';
import { planLegs } from '../calls/plan';
import { admitPstnCalls } from '../../core/calls/dial-policy';
import type { AppContext } from '../context';
import { campaignRunRepo } from '../../core/repos/campaign-run';

export interface Outbox {
  originate: { call: CallRow; campaigncallId: string }[];
  activeflows: { id: string; customerId: string }[];
  events: [EventType, ResourcePayload][];
}

export const emptyOutbox = (): Outbox => ({ originate: [], activeflows: [], events: [] });

/** Variables a campaign's flow can read (`${svc.outdialtarget.name}` in a talk text...). */
function variablesFor(c: CampaignRow, ccId: string, t: OutdialtargetRow): Record<string, string> {
  return {
    'svc.campaign.id': c.id,
    'svc.campaigncall.id': ccId,
    'svc.outdialtarget.id': t.id,
    'svc.outdialtarget.name': t.name,
    'svc.outdialtarget.data': t.data,
  };
}

/** How an attempt ended: its result, what it ended with, and the AMD verdict if any. */
export interface Ending {
  result: Exclude<CampaigncallResult, ''>;
  reason: Outcome;
  amd?: string;
}

/**
 * Ends a campaigncall and moves its target on: a success is done; a failure is idle again (not
 * before the outplan's interval for that outcome) while a destination has tries left, else done.
 */
export async function finishCampaigncall(trx: Knex.Transaction, cc: CampaigncallRow, end: Ending, plan: OutplanRow | null, out: Outbox): Promise<void> {
  const done = await campaigncallsRepo(trx).advance(cc.id, ['dialing', 'progressing'], { status: 'done', result: end.result, result_reason: end.reason, amd_result: end.amd ?? '' });
  if (!done) return;
  out.events.push(['campaigncall_updated', campaigncallJson(done)]);
  const run = campaignRunRepo(trx);
  const t = await run.lockTarget(cc.outdial_target_id);
  if (!t || t.status === 'done') return;
  const now = clock.now();
  const retry = end.result === 'fail' && plan !== null && nextDestination({ destinations: destinationsOf(t), tryCounts: tryCountsOf(t) }, maxTryCounts(plan)) !== null;
  await run.settleTarget(t.id, now, retry ? new Date(now.getTime() + retryDelay(plan!, end.reason)) : null);
}

/**
 * Dials `t` once (the caller picked it: idle, due, with a try left). `capped`: the customer's cap on
 * live PSTN calls (core/calls/dial-policy.ts) is reached; nothing was written and no try is spent,
 * the runner stops dialling until calls end, like any other pacing limit.
 */
export async function dialTarget(ctx: AppContext, trx: Knex.Transaction, c: CampaignRow, plan: OutplanRow, t: OutdialtargetRow, out: Outbox): Promise<'dialled' | 'capped'> {
  const next = nextDestination({ destinations: destinationsOf(t), tryCounts: tryCountsOf(t) }, maxTryCounts(plan));
  if (!next) return 'dialled';
  const destination = destinationsOf(t)[next.index]!;
  const now = clock.now();
  await campaignRunRepo(trx).spendTry(t.id, next.index, next.tryCount, now);

  const ccId = newId();
  const base = {
    id: ccId,
    customer_id: c.customer_id,
    campaign_id: c.id,
    outplan_id: plan.id,
    outdial_id: t.outdial_id,
    outdial_target_id: t.id,
    queue_id: c.queue_id,
    flow_id: c.flow_id,
    source: plan.source,
    destination,
    destination_index: next.index,
    try_count: next.tryCount,
    result: '' as const,
  };
  const repo = campaigncallsRepo(trx);
  const variables = variablesFor(c, ccId, t);

  if (c.type === 'flow') return startFlowCampaigncall(trx, c, base, variables, now, out);

  let leg;
  try {
    [leg] = await planLegs(ctx, c.customer_id, plan.source, [destination]);
  } catch (err) {
    if (!isApiError(err)) throw err;
    // Not dialable (whitelist, source number, balance, unregistered extension): a failed try.
    const cc = await repo.create({ ...base, activeflow_id: EMPTY_UUID, reference_type: 'none', reference_id: EMPTY_UUID, status: 'dialing' });
    out.events.push(['campaigncall_created', campaigncallJson(cc)]);
    ctx.logger.info({ campaign_id: c.id, campaigncall_id: ccId, reason: err.reason }, 'campaign target not dialable');
    await finishCampaigncall(trx, cc, { result: 'fail', reason: 'undialable' }, plan, out);
    return 'dialled';
  }
  const call = await callsRepo(trx).create({
    customer_id: c.customer_id,
    source: leg!.source,
    destination: leg!.destination,
    direction: 'outgoing',
    status: 'dialing',
    type: 'flow',
    flow_id: c.flow_id,
    data: { variables, anonymous: leg!.destination.type === 'tel' ? 'auto' : 'no', early_execution: false, dial_timeout: plan.dial_timeout },
    metadata: leg!.metadata,
  });
  if (leg!.pstn && (await admitPstnCalls(trx, c.customer_id, [call.id]))) {
    // Over the cap: undo this attempt inside the step's transaction (nothing of it was ever visible).
    await callsRepo(trx).remove(call.id);
    await campaignRunRepo(trx).returnTry(t.id, next.index, next.tryCount - 1);
    return 'capped';
  }
  const cc = await repo.create({ ...base, source: leg!.source, destination: leg!.destination, activeflow_id: EMPTY_UUID, reference_type: 'call', reference_id: call.id, status: 'dialing' });
  out.originate.push({ call, campaigncallId: cc.id });
  out.events.push(['campaigncall_created', campaigncallJson(cc)]);
  return 'dialled';
}

/** A flow campaign's try: its activeflow, started once the step commits, and its campaigncall. */
async function startFlowCampaigncall(
  trx: Knex.Transaction,
  c: CampaignRow,
  base: Omit<Parameters<ReturnType<typeof campaigncallsRepo>['create']>[0], 'activeflow_id' | 'reference_type' | 'reference_id' | 'status'>,
  variables: Record<string, string>,
  now: Date,
  out: Outbox,
): Promise<'dialled'> {
  const activeflowId = newId();
  const iso = now.toISOString();
  await activeflowsRepo(trx).insert(
    storedActiveflowRow(activeflowId, { customerId: c.customer_id, flowId: c.flow_id, onCompleteFlowId: EMPTY_UUID, referenceType: 'campaign', referenceId: base.id, variables }, iso),
  );
  const cc = await campaigncallsRepo(trx).create({ ...base, activeflow_id: activeflowId, reference_type: 'flow', reference_id: EMPTY_UUID, status: 'progressing' });
  out.activeflows.push({ id: activeflowId, customerId: c.customer_id });
  out.events.push(['campaigncall_created', campaigncallJson(cc)]);
  return 'dialled';
}
