/**
 * /queues: where callers wait for agents. tag_ids choose the agents (an agent must hold every tag
 * of the queue); wait_flow_id's talk/play/beep/sleep actions loop while a caller waits; wait_timeout
 * and service_timeout are milliseconds, 0 = none. Counters and the live queuecall ids are read-only.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import type { AppContext, AuthContext } from '../context';
import { invalidArgument, notFound } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { flowsRepo } from '../../core/repos/flows';
import { queueJson, queuesRepo, ROUTING_METHODS, type QueueFields, type QueueRow } from '../../core/repos/queues';
import { queuecallsRepo } from '../../core/repos/queuecalls';
import { checkTagIds } from '../../core/agents/tags';
import { generateDirectHash } from '../../core/extensions/credentials';
import { listOf, uuidOut } from './schemas';

const tag = 'Queue';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'queue not found');
/** A day: longer waits or services are a mistake more often than a plan. */
const MAX_TIMEOUT_MS = 86_400_000;
const timeout = () => z.number().int().min(0).max(MAX_TIMEOUT_MS);
const flowId = () => z.union([uuid(), z.literal('')]);

export const queueSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  detail: z.string(),
  routing_method: z.enum(ROUTING_METHODS),
  tag_ids: z.array(uuidOut()),
  direct_hash: z.string(),
  wait_flow_id: uuidOut(),
  wait_timeout: z.number().int(),
  service_timeout: z.number().int(),
  wait_queuecall_ids: z.array(uuidOut()),
  service_queuecall_ids: z.array(uuidOut()),
  total_incoming_count: z.number().int(),
  total_serviced_count: z.number().int(),
  total_abandoned_count: z.number().int(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const fields = {
  name: text().optional(),
  detail: text(1024).optional(),
  routing_method: z.enum(ROUTING_METHODS).optional().describe('"" or random (default random)'),
  tag_ids: z.array(uuid()).max(64).optional(),
  wait_flow_id: flowId().optional().describe('flow whose talk/play/beep/sleep actions loop while waiting; "" = ringback tone'),
  wait_timeout: timeout().optional().describe('ms; 0 = wait for ever'),
  service_timeout: timeout().optional().describe('ms; 0 = no limit'),
};

async function show(ctx: AppContext, q: QueueRow) {
  return queueJson(q, await queuecallsRepo(ctx.db).liveIds(q.id));
}

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<QueueRow> {
  const q = await queuesRepo(ctx.db).get(auth.customerId, id.toLowerCase());
  if (!q) throw missing();
  return q;
}

/** Checks references (tags, flow) and normalises the body into stored fields. */
async function checked(ctx: AppContext, customerId: string, b: Partial<Record<keyof typeof fields, unknown>>): Promise<QueueFields> {
  const f = { ...b } as QueueFields;
  if (f.routing_method === '') f.routing_method = 'random';
  if (f.tag_ids) f.tag_ids = await checkTagIds(ctx.db, customerId, f.tag_ids);
  if (f.wait_flow_id !== undefined) {
    const id = f.wait_flow_id === '' ? EMPTY_UUID : f.wait_flow_id.toLowerCase();
    if (id !== EMPTY_UUID && !(await flowsRepo(ctx.db).getOwned(customerId, id))) {
      throw invalidArgument('wait_flow_id: no such flow', [{ field: 'wait_flow_id', issue: 'unknown flow' }]);
    }
    f.wait_flow_id = id;
  }
  return f;
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/queues',
    tag,
    summary: 'Create a queue',
    permission: 'manager',
    body: z.object(fields),
    response: queueSchema,
    handler: async ({ ctx, auth, body }) => {
      const f = await checked(ctx, auth.customerId, body);
      return show(ctx, await queuesRepo(ctx.db).create(auth.customerId, { routing_method: 'random', ...f, direct_hash: generateDirectHash() }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/queues',
    tag,
    summary: 'List queues',
    permission: 'agent',
    paginated: true,
    response: listOf(queueSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await queuesRepo(ctx.db).list(auth.customerId, page);
      return { result: await Promise.all(p.result.map((q) => show(ctx, q))), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/queues/:id',
    tag,
    summary: 'Get a queue',
    permission: 'agent',
    params: idParams,
    response: queueSchema,
    handler: async ({ ctx, auth, params }) => show(ctx, await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/queues/:id',
    tag,
    summary: 'Update a queue',
    permission: 'manager',
    params: idParams,
    body: z.object(fields),
    response: queueSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const q = await owned(ctx, auth, params.id);
      const row = await queuesRepo(ctx.db).update(auth.customerId, q.id, await checked(ctx, auth.customerId, body));
      if (!row) throw missing();
      return show(ctx, row);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/queues/:id',
    tag,
    summary: 'Delete a queue (soft; callers already waiting stay)',
    permission: 'manager',
    params: idParams,
    response: queueSchema,
    handler: async ({ ctx, auth, params }) => {
      const row = await queuesRepo(ctx.db).softDelete(auth.customerId, params.id.toLowerCase());
      if (!row) throw missing();
      return show(ctx, row);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/queues/:id/routing_method',
    tag,
    summary: "Set a queue's routing method",
    permission: 'manager',
    params: idParams,
    body: z.object({ routing_method: z.enum(ROUTING_METHODS) }),
    response: queueSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const q = await owned(ctx, auth, params.id);
      return show(ctx, (await queuesRepo(ctx.db).update(auth.customerId, q.id, await checked(ctx, auth.customerId, body)))!);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/queues/:id/tag_ids',
    tag,
    summary: "Replace a queue's tags",
    permission: 'manager',
    params: idParams,
    body: z.object({ tag_ids: z.array(uuid()).max(64) }),
    response: queueSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const q = await owned(ctx, auth, params.id);
      return show(ctx, (await queuesRepo(ctx.db).update(auth.customerId, q.id, await checked(ctx, auth.customerId, body)))!);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/queues/:id/direct-hash-regenerate',
    tag,
    summary: "Regenerate a queue's direct hash",
    permission: 'manager',
    params: idParams,
    response: queueSchema,
    handler: async ({ ctx, auth, params }) => {
      const q = await owned(ctx, auth, params.id);
      return show(ctx, (await queuesRepo(ctx.db).update(auth.customerId, q.id, { direct_hash: generateDirectHash() }))!);
    },
  }),
];
