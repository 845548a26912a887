/**
 * /campaigns: create, read, update, delete, and PUT /campaigns/{id}/status (run | stop) which the
 * runner (control-api/campaigns/runner.ts) acts on. Status moves: stop → run; run → stopping while
 * campaign calls are live (the runner ends it at stop), else straight to stop; a request for the
 * status the campaign has or is heading to changes nothing; run while stopping is 409. A campaign
 * must be stopped to be deleted or to change its type, outdial, outplan or queue.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { EMPTY_UUID, newId } from '../../core/ids';
import { parseActions, type Action } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { campaignJson, campaignsRepo, type CampaignPatch, type CampaignRow } from '../../core/repos/campaigns';
import { campaigncallJson, campaigncallsRepo } from '../../core/repos/campaigncalls';
import { outplansRepo } from '../../core/repos/outplans';
import { outdialsRepo } from '../../core/repos/outdials';
import { CAMPAIGN_TYPES, END_HANDLES, SERVICE_LEVEL_MAX, SERVICE_LEVEL_MIN, decideStatus } from '../../core/campaigns/model';
import type { Db } from '../../core/db/knex';
import type { AppContext } from '../context';
import { runnerOf } from '../campaigns/runner';
import { listOf } from './schemas';
import { amd as amdOption } from '../../core/flow/options/media';
import type { CampaignAmd } from '../../core/repos/campaigns';
import { campaigncallSchema, campaignSchema, publish, stripUndefined } from '../campaigns/schemas';
import { campaignRunRepo } from '../../core/repos/campaign-run';
import { liveQueueExists } from '../../core/repos/queues';

const tag = 'Campaign';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'campaign not found');
const serviceLevel = z
  .number()
  .int()
  .min(SERVICE_LEVEL_MIN)
  .max(SERVICE_LEVEL_MAX)
  .describe(
    `${SERVICE_LEVEL_MIN}-${SERVICE_LEVEL_MAX}: without a queue the most campaign calls live at once; with a queue the percentage of its available agents that may have an attempt waiting (docs/campaigns.md)`,
  );
const refId = () => uuid().describe('empty UUID = unset');
const amdField = amdOption.strict().nullable().describe("place every attempt with answering machine detection (the amd action's options); null = off");
const dialRate = z.number().int().min(0).max(6000).describe('attempts started per minute at most, evenly spaced; 0 = no limit');

const resourceFields = {
  outplan_id: refId().optional(),
  outdial_id: refId().optional(),
  queue_id: refId().optional(),
  next_campaign_id: refId().optional(),
};

async function owned(ctx: AppContext, customerId: string, id: string): Promise<CampaignRow> {
  const c = await campaignsRepo(ctx.db).get(customerId, id);
  if (!c) throw missing();
  return c;
}

const set = (id: string | undefined) => id !== undefined && id !== EMPTY_UUID;
const notFoundField = (field: string, what: string) => new ApiError('RESOURCE_NOT_FOUND', `${field}: ${what} not found`, { details: [{ field, issue: `no such ${what}` }] });

/** Every referenced resource must be this customer's (404 naming the field). */
async function checkResources(ctx: AppContext, customerId: string, r: { outplan_id?: string; outdial_id?: string; queue_id?: string; next_campaign_id?: string }, self?: string): Promise<void> {
  if (set(r.outplan_id) && !(await outplansRepo(ctx.db).get(customerId, r.outplan_id!))) throw notFoundField('outplan_id', 'outplan');
  if (set(r.outdial_id) && !(await outdialsRepo(ctx.db).get(customerId, r.outdial_id!))) throw notFoundField('outdial_id', 'outdial');
  if (set(r.queue_id)) {
    // Queues belong to another part of the platform; without their table no queue can exist.
    if (!(await liveQueueExists(ctx.db, customerId, r.queue_id!))) throw notFoundField('queue_id', 'queue');
  }
  if (set(r.next_campaign_id)) {
    if (r.next_campaign_id === self) throw invalidArgument('next_campaign_id: a campaign cannot follow itself', [{ field: 'next_campaign_id', issue: 'is this campaign' }]);
    if (!(await campaignsRepo(ctx.db).get(customerId, r.next_campaign_id!))) throw notFoundField('next_campaign_id', 'campaign');
  }
}

/**
 * The actions validated, and the non-listed flow that holds them (calls keep the one they started
 * with). With AMD the flow starts with an amd action, as POST /calls does; `actions` stays as given.
 */
async function flowFor(db: Db, customerId: string, raw: unknown[], amd: CampaignAmd | null): Promise<{ actions: Action[]; flowId: string }> {
  const actions = parseActions(raw);
  const flowActions = amd ? parseActions([{ type: 'amd', option: amd }, ...actions]) : actions;
  const flow = await flowsRepo(db).create({ id: newId(), customer_id: customerId, actions: flowActions, persist: false, type: 'campaign', name: 'campaign' });
  return { actions, flowId: flow.id };
}

/**
 * Writes the patch and publishes campaign_updated once; a patch that changes nothing (every field
 * already has that value) writes and publishes nothing.
 */
async function updated(ctx: AppContext, customerId: string, id: string, patch: CampaignPatch, current?: CampaignRow) {
  if (current && Object.entries(patch).every(([k, v]) => isDeepStrictEqual(current[k as keyof CampaignRow] ?? null, v ?? null))) return campaignJson(current);
  const row = await campaignsRepo(ctx.db).update(customerId, id, patch);
  if (!row) throw missing();
  const json = campaignJson(row);
  await publish(ctx, 'campaign_updated', json);
  return json;
}

function mustBeStopped(c: CampaignRow, what: string): void {
  if (c.status !== 'stop') throw stateInvalid(`the campaign is ${c.status}; stop it before changing ${what}`);
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/campaigns',
    tag,
    summary: 'Create a campaign (status stop)',
    permission: 'manager',
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      type: z.enum(CAMPAIGN_TYPES).optional().describe('default call'),
      service_level: serviceLevel,
      end_handle: z.enum(END_HANDLES).optional().describe('default stop'),
      actions: z.array(z.unknown()).max(100).optional(),
      amd: amdField.optional(),
      dial_rate: dialRate.optional().describe('attempts started per minute at most; default 0 = no limit'),
      ...resourceFields,
    }),
    response: campaignSchema,
    handler: async ({ ctx, auth, body }) => {
      await checkResources(ctx, auth.customerId, body);
      const { actions, flowId } = await flowFor(ctx.db, auth.customerId, body.actions ?? [], body.amd ?? null);
      const row = await campaignsRepo(ctx.db).create(auth.customerId, {
        type: body.type ?? 'call',
        name: body.name ?? '',
        detail: body.detail ?? '',
        service_level: body.service_level,
        end_handle: body.end_handle ?? 'stop',
        actions,
        flow_id: flowId,
        outplan_id: body.outplan_id ?? EMPTY_UUID,
        outdial_id: body.outdial_id ?? EMPTY_UUID,
        queue_id: body.queue_id ?? EMPTY_UUID,
        next_campaign_id: body.next_campaign_id ?? EMPTY_UUID,
        amd: body.amd ?? null,
        dial_rate: body.dial_rate ?? 0,
      });
      const json = campaignJson(row);
      await publish(ctx, 'campaign_created', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns',
    tag,
    summary: 'List campaigns',
    permission: 'manager',
    paginated: true,
    response: listOf(campaignSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await campaignsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(campaignJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/:id',
    tag,
    summary: 'Get a campaign',
    permission: 'manager',
    params: idParams,
    response: campaignSchema,
    handler: async ({ ctx, auth, params }) => campaignJson(await owned(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id',
    tag,
    summary: 'Update name, detail, type, service level, end handle, AMD, dial rate',
    permission: 'manager',
    params: idParams,
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      type: z.enum(CAMPAIGN_TYPES).optional(),
      service_level: serviceLevel.optional(),
      end_handle: z.enum(END_HANDLES).optional(),
      amd: amdField.optional().describe('attempts placed from now on use it; calls in flight keep theirs'),
      dial_rate: dialRate.optional(),
    }),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await owned(ctx, auth.customerId, params.id);
      if (body.type !== undefined && body.type !== c.type) mustBeStopped(c, 'its type');
      const patch: CampaignPatch = stripUndefined(body);
      if (body.amd !== undefined && !isDeepStrictEqual(body.amd, c.amd)) patch.flow_id = (await flowFor(ctx.db, auth.customerId, c.actions, body.amd)).flowId;
      const json = await updated(ctx, auth.customerId, params.id, patch, c);
      runnerOf(ctx)?.poke();
      return json;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/campaigns/:id',
    tag,
    summary: 'Delete a stopped campaign (soft)',
    permission: 'manager',
    params: idParams,
    response: campaignSchema,
    handler: async ({ ctx, auth, params }) => {
      const c = await owned(ctx, auth.customerId, params.id);
      if (c.status !== 'stop') throw stateInvalid(`the campaign is ${c.status}; stop it first`);
      const row = await campaignsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!row) throw missing();
      const json = campaignJson(row);
      await publish(ctx, 'campaign_deleted', json);
      return json;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id/status',
    tag,
    summary: 'Run or stop the campaign',
    permission: 'manager',
    params: idParams,
    body: z.object({ status: z.enum(['run', 'stop']).describe('stopping is reached, not requested') }),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      // Decided with the row locked: the runner steps a campaign holding the same lock, so it cannot
      // dial between counting the live calls here and writing the status.
      const moved = await ctx.db.transaction(async (trx) => {
        const c = await campaignRunRepo(trx).lockOwned(auth.customerId, params.id);
        if (!c) throw missing();
        const d = decideStatus(c.status, body.status, await campaigncallsRepo(trx).countOngoing(c.id));
        if (d.kind === 'same') return { row: c, to: null };
        if (d.kind === 'invalid') throw stateInvalid(d.why);
        if (d.status === 'run') {
          if (!set(c.outplan_id) || !set(c.outdial_id)) throw stateInvalid('the campaign needs an outplan_id and an outdial_id to run');
          await checkResources(ctx, auth.customerId, c, c.id);
        }
        return { row: (await campaignsRepo(trx).setStatus(c.id, [c.status], d.status))!, to: d.status };
      });
      const json = campaignJson(moved.row);
      if (moved.to) {
        await publish(ctx, `campaign_status_${moved.to}`, json);
        runnerOf(ctx)?.poke();
      }
      return json;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id/service_level',
    tag,
    summary: 'Set the service level',
    permission: 'manager',
    params: idParams,
    body: z.object({ service_level: serviceLevel }),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const json = await updated(ctx, auth.customerId, params.id, { service_level: body.service_level }, await owned(ctx, auth.customerId, params.id));
      runnerOf(ctx)?.poke();
      return json;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id/actions',
    tag,
    summary: 'Replace the actions (calls already placed keep theirs)',
    permission: 'manager',
    params: idParams,
    body: z.object({ actions: z.array(z.unknown()).max(100) }),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await owned(ctx, auth.customerId, params.id);
      const { actions, flowId } = await flowFor(ctx.db, auth.customerId, body.actions, c.amd);
      return updated(ctx, auth.customerId, params.id, { actions, flow_id: flowId });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id/resource_info',
    tag,
    summary: 'Set outplan, outdial, queue and next campaign',
    permission: 'manager',
    params: idParams,
    body: z.object(resourceFields),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await owned(ctx, auth.customerId, params.id);
      const changes = stripUndefined(body);
      if (['outplan_id', 'outdial_id', 'queue_id'].some((f) => f in changes && changes[f as keyof typeof changes] !== c[f as keyof CampaignRow])) {
        mustBeStopped(c, 'its outplan, outdial or queue');
      }
      await checkResources(ctx, auth.customerId, changes, c.id);
      return updated(ctx, auth.customerId, params.id, changes, c);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/campaigns/:id/next_campaign_id',
    tag,
    summary: 'Set the campaign run when this one runs out of targets',
    permission: 'manager',
    params: idParams,
    body: z.object({ next_campaign_id: refId() }),
    response: campaignSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const c = await owned(ctx, auth.customerId, params.id);
      await checkResources(ctx, auth.customerId, { next_campaign_id: body.next_campaign_id }, c.id);
      return updated(ctx, auth.customerId, params.id, { next_campaign_id: body.next_campaign_id }, c);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/:id/campaigncalls',
    tag,
    summary: 'List the campaign calls of a campaign',
    permission: 'manager',
    params: idParams,
    paginated: true,
    response: listOf(campaigncallSchema),
    handler: async ({ ctx, auth, params, page }) => {
      await owned(ctx, auth.customerId, params.id);
      const p = await campaigncallsRepo(ctx.db).list(auth.customerId, page, params.id);
      return { result: p.result.map(campaigncallJson), next_page_token: p.next_page_token };
    },
  }),
];
