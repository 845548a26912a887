/**
 * /providercalls: an operator's outbound call placed through one provider (ProjectSuperAdmin, every
 * customer's records). POST makes the calls as POST /calls does, for the operator's own customer
 * (its source numbers, flows and balance), except that each tel destination is dialled through the
 * given provider only, whatever the routes say (the call's data.forced_provider_id). The record keeps
 * the request and the ids of the calls and groupcalls made; DELETE hides the record, the calls stay.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import { ApiError, invalidArgument } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { providersRepo } from '../../core/repos/providers';
import { providercallJson, providercallsRepo } from '../../core/repos/providercalls';
import { addressSchema, legacyTime, listOf, uuidOut } from './schemas';
import { createBody, createCalls } from './calls';

const tag = 'ProviderCall';
const missing = () => new ApiError('PROVIDERCALL_NOT_FOUND', 'providercall not found');

const providercallSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  provider_id: uuidOut(),
  flow_id: uuidOut(),
  source: addressSchema,
  destinations: z.array(addressSchema),
  anonymous: z.enum(['yes', 'no', 'auto']),
  call_ids: z.array(z.string()),
  groupcall_ids: z.array(z.string()),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const body = createBody.omit({ amd: true }).extend({ provider_id: uuid() });

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/providercalls',
    tag,
    summary: 'Call tel destinations through one provider, bypassing the routes (ProjectSuperAdmin)',
    permission: 'superadmin',
    body,
    response: providercallSchema,
    handler: async ({ ctx, auth, body }) => {
      const provider = await providersRepo(ctx.db).get(body.provider_id);
      if (!provider) throw new ApiError('PROVIDER_NOT_FOUND', 'provider_id: provider not found', { details: [{ field: 'provider_id' }] });
      const i = body.destinations.findIndex((d) => d.type !== 'tel');
      if (i >= 0) throw invalidArgument(`destinations[${i}].type: a provider call dials tel destinations`, [{ field: `destinations[${i}].type`, index: i, issue: 'must be tel' }]);
      const { provider_id: providerId, ...call } = body;
      const { calls, groupcalls } = await createCalls(ctx, auth.customerId, call, { forcedProviderId: providerId });
      const row = await providercallsRepo(ctx.db).create({
        customer_id: auth.customerId,
        provider_id: provider.id,
        flow_id: calls[0]?.flow_id ?? body.flow_id ?? EMPTY_UUID,
        source: body.source,
        destinations: body.destinations,
        anonymous: body.anonymous ?? 'auto',
        call_ids: calls.map((c) => c.id),
        groupcall_ids: groupcalls.map((g) => g.id),
      });
      return providercallJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/providercalls',
    tag,
    summary: "Every customer's provider calls, newest first (ProjectSuperAdmin)",
    permission: 'superadmin',
    paginated: true,
    query: z.object({ provider_id: uuid().optional(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(providercallSchema),
    handler: async ({ ctx, page, query }) => {
      const p = await providercallsRepo(ctx.db).list(page, { provider_id: query.provider_id });
      return { result: p.result.map(providercallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/providercalls/:id',
    tag,
    summary: 'Get a provider call (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: providercallSchema,
    handler: async ({ ctx, params }) => {
      const p = await providercallsRepo(ctx.db).get(params.id);
      if (!p) throw missing();
      return providercallJson(p);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/providercalls/:id',
    tag,
    summary: 'Delete a provider call record; its calls stay (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: providercallSchema,
    handler: async ({ ctx, params }) => {
      const p = await providercallsRepo(ctx.db).softDelete(params.id);
      if (!p) throw missing();
      return providercallJson(p);
    },
  }),
];
