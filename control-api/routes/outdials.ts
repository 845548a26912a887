/**
 * /outdials and /outdials/{id}/targets: the lists campaigns dial. A target has up to five
 * destinations (destination_0..4; at least one), each a tel (E.164), sip, extension or agent
 * address; its try counts and status are the runner's. An outdial used by a campaign that is not
 * stopped cannot be deleted (409).
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { outdialJson, outdialsRepo, outdialtargetJson, type OutdialRow } from '../../core/repos/outdials';
import { campaignsRepo } from '../../core/repos/campaigns';
import type { AppContext } from '../context';
import { listOf } from './schemas';
import { dialAddress, outdialSchema, outdialtargetSchema, publish, stripUndefined } from '../campaigns/schemas';

const tag = 'Outdial';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'outdial not found');
const targetMissing = () => notFound('RESOURCE_NOT_FOUND', 'outdial target not found');
const targetParams = z.object({ id: uuid(), target_id: uuid() });
const data = () => text(65_536);

async function owned(ctx: AppContext, customerId: string, id: string): Promise<OutdialRow> {
  const o = await outdialsRepo(ctx.db).get(customerId, id);
  if (!o) throw missing();
  return o;
}

/** campaign_id must be the empty UUID or a campaign of this customer. */
async function checkCampaign(ctx: AppContext, customerId: string, campaignId: string | undefined): Promise<void> {
  if (!campaignId || campaignId === EMPTY_UUID) return;
  if (!(await campaignsRepo(ctx.db).get(customerId, campaignId))) {
    throw notFound('RESOURCE_NOT_FOUND', 'campaign_id: campaign not found');
  }
}

async function updated(ctx: AppContext, customerId: string, id: string, patch: Parameters<ReturnType<typeof outdialsRepo>['update']>[2]) {
  const row = await outdialsRepo(ctx.db).update(customerId, id, patch);
  if (!row) throw missing();
  const json = outdialJson(row);
  await publish(ctx, 'outdial_updated', json);
  return json;
}

const destination = dialAddress.nullable().optional();

export const routes = [
  defineRoute({
    method: 'post',
    path: '/outdials',
    tag,
    summary: 'Create an outdial',
    permission: 'manager',
    body: z.object({ campaign_id: uuid().optional(), name: text().optional(), detail: text(1024).optional(), data: data().optional() }),
    response: outdialSchema,
    handler: async ({ ctx, auth, body }) => {
      await checkCampaign(ctx, auth.customerId, body.campaign_id);
      const row = await outdialsRepo(ctx.db).create(auth.customerId, { name: '', detail: '', data: '', ...stripUndefined(body) });
      const json = outdialJson(row);
      await publish(ctx, 'outdial_created', json);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outdials',
    tag,
    summary: 'List outdials',
    permission: 'manager',
    paginated: true,
    response: listOf(outdialSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await outdialsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(outdialJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outdials/:id',
    tag,
    summary: 'Get an outdial',
    permission: 'manager',
    params: idParams,
    response: outdialSchema,
    handler: async ({ ctx, auth, params }) => outdialJson(await owned(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/outdials/:id',
    tag,
    summary: 'Update name and detail',
    permission: 'manager',
    params: idParams,
    body: z.object({ name: text().optional(), detail: text(1024).optional() }),
    response: outdialSchema,
    handler: async ({ ctx, auth, params, body }) => updated(ctx, auth.customerId, params.id, stripUndefined(body)),
  }),
  defineRoute({
    method: 'put',
    path: '/outdials/:id/campaign_id',
    tag,
    summary: 'Set the campaign id',
    permission: 'manager',
    params: idParams,
    body: z.object({ campaign_id: uuid() }),
    response: outdialSchema,
    handler: async ({ ctx, auth, params, body }) => {
      await owned(ctx, auth.customerId, params.id);
      await checkCampaign(ctx, auth.customerId, body.campaign_id);
      return updated(ctx, auth.customerId, params.id, { campaign_id: body.campaign_id });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/outdials/:id/data',
    tag,
    summary: 'Set the data',
    permission: 'manager',
    params: idParams,
    body: z.object({ data: data() }),
    response: outdialSchema,
    handler: async ({ ctx, auth, params, body }) => updated(ctx, auth.customerId, params.id, { data: body.data }),
  }),
  defineRoute({
    method: 'delete',
    path: '/outdials/:id',
    tag,
    summary: 'Delete an outdial and its targets (soft)',
    permission: 'manager',
    params: idParams,
    response: outdialSchema,
    handler: async ({ ctx, auth, params }) => {
      await owned(ctx, auth.customerId, params.id);
      if ((await campaignsRepo(ctx.db).activeUsing(auth.customerId, 'outdial_id', params.id)) > 0) {
        throw stateInvalid('a campaign that is not stopped uses this outdial');
      }
      const row = await outdialsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!row) throw missing();
      const json = outdialJson(row);
      await publish(ctx, 'outdial_deleted', json);
      return json;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/outdials/:id/targets',
    tag,
    summary: 'Add a target (destination_0..4, at least one)',
    permission: 'manager',
    params: idParams,
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      data: data().optional(),
      destination_0: destination,
      destination_1: destination,
      destination_2: destination,
      destination_3: destination,
      destination_4: destination,
    }),
    response: outdialtargetSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const outdial = await owned(ctx, auth.customerId, params.id);
      const destinations = [body.destination_0, body.destination_1, body.destination_2, body.destination_3, body.destination_4].map((d) => d ?? null);
      if (destinations.every((d) => d === null)) {
        throw invalidArgument('destination_0: at least one destination is required', [{ field: 'destination_0', issue: 'required' }]);
      }
      const row = await outdialsRepo(ctx.db).createTarget(outdial, { name: body.name ?? '', detail: body.detail ?? '', data: body.data ?? '', destinations });
      return outdialtargetJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outdials/:id/targets',
    tag,
    summary: 'List the targets',
    permission: 'manager',
    params: idParams,
    paginated: true,
    response: listOf(outdialtargetSchema),
    handler: async ({ ctx, auth, params, page }) => {
      await owned(ctx, auth.customerId, params.id);
      const p = await outdialsRepo(ctx.db).listTargets(params.id, page);
      return { result: p.result.map(outdialtargetJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outdials/:id/targets/:target_id',
    tag,
    summary: 'Get a target',
    permission: 'manager',
    params: targetParams,
    response: outdialtargetSchema,
    handler: async ({ ctx, auth, params }) => {
      await owned(ctx, auth.customerId, params.id);
      const t = await outdialsRepo(ctx.db).getTarget(params.id, params.target_id);
      if (!t) throw targetMissing();
      return outdialtargetJson(t);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/outdials/:id/targets/:target_id',
    tag,
    summary: 'Delete a target (soft; a live call of it goes on)',
    permission: 'manager',
    params: targetParams,
    response: outdialtargetSchema,
    handler: async ({ ctx, auth, params }) => {
      await owned(ctx, auth.customerId, params.id);
      const t = await outdialsRepo(ctx.db).deleteTarget(params.id, params.target_id);
      if (!t) throw targetMissing();
      return outdialtargetJson(t);
    },
  }),
];
