/**
 * /queuecalls: callers in queues. kick takes a live one out (its flow goes on with the next action,
 * or the service ends); DELETE kicks a live one and removes the record from lists.
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import type { AppContext, AuthContext } from '../context';
import { notFound, stateInvalid } from '../../core/errors';
import { eventPublisher } from '../../core/events/bus';
import { LIVE_QUEUECALL, QUEUECALL_STATUSES, queuecallJson, queuecallsRepo, type QueuecallRow } from '../../core/repos/queuecalls';
import { publishQueuecall, publishQueuecallStatus } from '../../core/queues/events';
import { commandBus } from '../calls/bus';
import { listOf, uuidOut } from './schemas';

const tag = 'Queue';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'queuecall not found');

export const queuecallSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  queue_id: uuidOut(),
  reference_type: z.literal('call'),
  reference_id: uuidOut(),
  reference_activeflow_id: uuidOut(),
  status: z.enum(QUEUECALL_STATUSES),
  service_agent_id: uuidOut(),
  timeout_wait: z.number().int(),
  timeout_service: z.number().int(),
  duration_waiting: z.number().int(),
  duration_service: z.number().int(),
  tm_create: z.string(),
  tm_service: z.string(),
  tm_end: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<QueuecallRow> {
  const q = await queuecallsRepo(ctx.db).get(auth.customerId, id.toLowerCase());
  if (!q) throw missing();
  return q;
}

/**
 * Asks the node holding the caller to take it out. With no live node (it died), the record is
 * closed here: abandoned, or done when it was in service.
 */
async function kick(ctx: AppContext, q: QueuecallRow): Promise<QueuecallRow> {
  if (!LIVE_QUEUECALL.includes(q.status)) throw stateInvalid(`the queuecall is ${q.status}`);
  const sent = await commandBus(ctx).toCallOwner({ type: 'queuecall.kick', callId: q.reference_id, queuecallId: q.id });
  if (sent) return (await queuecallsRepo(ctx.db).get(null, q.id)) ?? q;
  const to = q.status === 'service' ? 'done' : 'abandoned';
  const row = await queuecallsRepo(ctx.db).transition(q.id, to, { tm_end: new Date() });
  if (row) await publishQueuecallStatus(eventPublisher(ctx), row);
  return row ?? q;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/queuecalls',
    tag,
    summary: 'List queuecalls',
    permission: 'agent',
    paginated: true,
    query: z.object({ queue_id: z.guid().optional(), status: z.enum(QUEUECALL_STATUSES).optional() }),
    response: listOf(queuecallSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await queuecallsRepo(ctx.db).list(auth.customerId, page, { queueId: query.queue_id?.toLowerCase(), status: query.status });
      return { result: p.result.map(queuecallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/queuecalls/:id',
    tag,
    summary: 'Get a queuecall',
    permission: 'agent',
    params: idParams,
    response: queuecallSchema,
    handler: async ({ ctx, auth, params }) => queuecallJson(await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/queuecalls/:id/kick',
    tag,
    summary: 'Kick a caller out of its queue',
    permission: 'manager',
    params: idParams,
    response: queuecallSchema,
    handler: async ({ ctx, auth, params }) => queuecallJson(await kick(ctx, await owned(ctx, auth, params.id))),
  }),
  defineRoute({
    method: 'post',
    path: '/queuecalls/reference_id/:id/kick',
    tag,
    summary: "Kick a call's live queuecall",
    permission: 'manager',
    params: idParams,
    response: queuecallSchema,
    handler: async ({ ctx, auth, params }) => {
      const q = await queuecallsRepo(ctx.db).liveByReference(auth.customerId, params.id.toLowerCase());
      if (!q) throw missing();
      return queuecallJson(await kick(ctx, q));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/queuecalls/:id',
    tag,
    summary: 'Delete a queuecall (kicks it first when live)',
    permission: 'manager',
    params: idParams,
    response: queuecallSchema,
    handler: async ({ ctx, auth, params }) => {
      const q = await owned(ctx, auth, params.id);
      if (LIVE_QUEUECALL.includes(q.status) && q.status !== 'kicking') await kick(ctx, q);
      const row = await queuecallsRepo(ctx.db).softDelete(auth.customerId, q.id);
      if (!row) throw missing();
      await publishQueuecall(eventPublisher(ctx), 'queuecall_deleted', row);
      return queuecallJson(row);
    },
  }),
];
