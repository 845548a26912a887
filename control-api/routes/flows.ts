/**
 * /flows: CRUD of action lists. Actions are validated through core/flow (INVALID_ARGUMENT details
 * name the action index and field); actions without an id get a server-generated one, on create and
 * on every PUT. PUT leaves running activeflows alone (they hold their own copy). DELETE is soft.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { ApiError, invalidArgument } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { parseActions } from '../../core/flow';
import { flowJson, flowsRepo, type FlowRow } from '../../core/repos/flows';
import type { AppContext } from '../context';
import { writeNewDirectHash } from '../direct-hash';
import { checkAiVersionPins } from '../flow-ai-versions';
import { listOf, rfc3339OrNull, uuidOut } from './schemas';

export const actionSchema = z
  .object({
    id: z.string().optional().describe('UUID; generated when omitted'),
    next_id: z.string().optional().describe('UUID; empty or the empty UUID = next element'),
    type: z.string().describe('action type (spec: Action; our extension: twiml, see docs/twilio.md)'),
    option: z.record(z.string(), z.unknown()).optional(),
    tm_execute: z.string().nullable().optional().describe('read-only; set in activeflow responses'),
  })
  .describe('Action');

export const flowSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.string(),
  name: z.string(),
  detail: z.string(),
  actions: z.array(actionSchema),
  direct_hash: z.string().describe("'' until POST /flows/{id}/direct-hash-regenerate makes one"),
  on_complete_flow_id: uuidOut(),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
});

/** Actions arrive unchecked by zod: core/flow reports every problem with its index and field. */
const actionsInput = z.array(z.unknown()).describe('array of Action; validated per type');

const createBody = z.object({
  name: text().optional(),
  detail: text(1024).optional(),
  actions: actionsInput.optional(),
  on_complete_flow_id: uuid().optional().describe('flow run when this one completes (chains stop after 5 hops); empty UUID = none'),
});

const flowNotFound = () => new ApiError('FLOW_NOT_FOUND', 'flow not found');

/** on_complete_flow_id must be another live flow of the customer (or unset). */
async function checkOnComplete(ctx: AppContext, customerId: string, id: string | undefined, self?: string): Promise<string | undefined> {
  if (id === undefined || id === EMPTY_UUID) return id;
  const problem = (issue: string) => invalidArgument(`on_complete_flow_id: ${issue}`, [{ field: 'on_complete_flow_id', issue }]);
  if (id === self) throw problem('a flow cannot complete into itself');
  const target = await flowsRepo(ctx.db).getOwned(customerId, id);
  if (!target || !target.persist) throw problem('no flow with this id');
  return id;
}

async function owned(ctx: AppContext, customerId: string, id: string): Promise<FlowRow> {
  const f = await flowsRepo(ctx.db).getOwned(customerId, id);
  if (!f || !f.persist) throw flowNotFound();
  return f;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/flows',
    tag: 'Flow',
    summary: 'List flows',
    permission: 'manager',
    paginated: true,
    response: listOf(flowSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await flowsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(flowJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/flows',
    tag: 'Flow',
    summary: 'Create a flow',
    permission: 'manager',
    body: createBody,
    response: flowSchema,
    handler: async ({ ctx, auth, body }) => {
      const actions = parseActions(body.actions ?? [], { egress: ctx.egress });
      await checkAiVersionPins(ctx.db, auth.customerId, actions);
      const onComplete = await checkOnComplete(ctx, auth.customerId, body.on_complete_flow_id);
      const f = await flowsRepo(ctx.db).create({
        customer_id: auth.customerId,
        name: body.name ?? '',
        detail: body.detail ?? '',
        actions,
        on_complete_flow_id: onComplete ?? EMPTY_UUID,
      });
      return flowJson(f);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/flows/:id',
    tag: 'Flow',
    summary: 'Get a flow',
    permission: 'manager',
    params: idParams,
    response: flowSchema,
    handler: async ({ ctx, auth, params }) => flowJson(await owned(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/flows/:id',
    tag: 'Flow',
    summary: 'Update a flow (absent fields keep their value; omitted action ids are regenerated)',
    permission: 'manager',
    params: idParams,
    body: createBody,
    response: flowSchema,
    handler: async ({ ctx, auth, params, body }) => {
      await owned(ctx, auth.customerId, params.id);
      const actions = body.actions === undefined ? undefined : parseActions(body.actions, { egress: ctx.egress });
      if (actions) await checkAiVersionPins(ctx.db, auth.customerId, actions);
      const onComplete = await checkOnComplete(ctx, auth.customerId, body.on_complete_flow_id, params.id);
      const f = await flowsRepo(ctx.db).update(auth.customerId, params.id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.detail !== undefined ? { detail: body.detail } : {}),
        ...(actions ? { actions } : {}),
        ...(onComplete !== undefined ? { on_complete_flow_id: onComplete } : {}),
      });
      if (!f) throw flowNotFound();
      return flowJson(f);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/flows/:id',
    tag: 'Flow',
    summary: 'Delete a flow (soft); returns the deleted flow',
    permission: 'manager',
    params: idParams,
    response: flowSchema,
    handler: async ({ ctx, auth, params }) => {
      await owned(ctx, auth.customerId, params.id);
      const f = await flowsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!f) throw flowNotFound();
      return flowJson(f);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/flows/:id/direct-hash-regenerate',
    tag: 'Flow',
    summary: 'Give the flow a new direct hash (the old one stops naming it)',
    permission: 'manager',
    params: idParams,
    response: flowSchema,
    handler: async ({ ctx, auth, params }) => {
      await owned(ctx, auth.customerId, params.id);
      const f = await writeNewDirectHash('flows_direct_hash_uq', (direct_hash) => flowsRepo(ctx.db).update(auth.customerId, params.id, { direct_hash }));
      if (!f) throw flowNotFound();
      return flowJson(f);
    },
  }),
];
