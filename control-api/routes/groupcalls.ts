/**
 * /groupcalls: ring several destinations together (ring_all) or in turn (linear); the first answer
 * runs the flow and, with hangup_others, the rest are cancelled. POST writes the groupcall and its
 * Call rows and enqueues groupcall.start on the shared originate queue; hangup goes to the node that
 * owns its calls. Destinations get the checks of POST /calls (control-api/calls/plan.ts).
 */
import { newCallFields, resolveCallFlow } from '../calls/flow';
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { ApiError } from '../../core/errors';
import { flowsRepo } from '../../core/repos/flows';
import { callJson, callsRepo } from '../../core/repos/calls';
import { chargeEndedCall } from '../../core/billing/call-end';
import { groupcallJson, groupcallsRepo, type GroupcallRow } from '../../core/repos/groupcalls';
import { publishResourceEvent } from '../../core/events/catalogue';
import { eventPublisher } from '../../core/events/bus';
import { ANSWER_METHODS, RING_METHODS } from '../../core/groupcalls/model';
import { writeGroupcall } from '../../core/groupcalls/write';
import { commandBus } from '../calls/bus';
import { planLegs } from '../calls/plan';
import type { AppContext, AuthContext } from '../context';
import { addressSchema, listOf, rfc3339OrNull, uuidOut } from './schemas';

export const groupcallSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  owner_type: z.string(),
  owner_id: uuidOut(),
  status: z.enum(['progressing', 'hangingup', 'hangup']),
  flow_id: uuidOut(),
  source: addressSchema,
  destinations: z.array(addressSchema),
  master_call_id: uuidOut(),
  master_groupcall_id: uuidOut(),
  ring_method: z.enum(RING_METHODS),
  answer_method: z.enum(ANSWER_METHODS),
  answer_call_id: uuidOut(),
  call_ids: z.array(z.string()),
  answer_groupcall_id: uuidOut(),
  groupcall_ids: z.array(z.string()),
  call_count: z.number(),
  groupcall_count: z.number(),
  dial_index: z.number(),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
});

const createBody = z.object({
  ...newCallFields,
  ring_method: z.enum(RING_METHODS).describe('"" = ring_all'),
  answer_method: z.enum(ANSWER_METHODS).describe('"" = hangup_others'),
});

const notFound = () => new ApiError('GROUPCALL_NOT_FOUND', 'groupcall not found');

async function owned(ctx: AppContext, auth: AuthContext, id: string): Promise<GroupcallRow> {
  const g = await groupcallsRepo(ctx.db).getOwned(auth.customerId, id);
  if (!g) throw notFound();
  return g;
}

/** Asks the node ringing the groupcall to hang it up; with no live node, ends the row here. */
async function hangup(ctx: AppContext, g: GroupcallRow): Promise<GroupcallRow> {
  const bus = commandBus(ctx);
  for (const callId of g.call_ids) {
    const node = await bus.callOwner(callId);
    if (node) {
      await bus.toNode(node, { type: 'groupcall.hangup', groupcallId: g.id });
      return g;
    }
  }
  const t = await groupcallsRepo(ctx.db).transition(g.id, 'hangup');
  if (t.changed && t.row) await publishResourceEvent(eventPublisher(ctx), 'groupcall_hangup', groupcallJson(t.row) as never).catch(() => undefined);
  for (const id of g.call_ids) {
    const c = await callsRepo(ctx.db).get(id);
    if (c && c.status === 'dialing' && c.node_id === '') {
      await callsRepo(ctx.db).transition(id, 'canceling');
      await callsRepo(ctx.db).hangup(id, 'normal_clearing', [chargeEndedCall]);
    }
  }
  return t.row ?? g;
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/groupcalls',
    tag: 'Groupcall',
    summary: 'Ring several destinations; the first answer runs the flow',
    permission: 'manager',
    body: createBody,
    response: groupcallSchema,
    handler: async ({ ctx, auth, body }) => {
      const cid = auth.customerId;
      const resolved = await resolveCallFlow(ctx, cid, body);
      const vars = { variables: resolved.variables };
      const { flowId, actions } = resolved;
      const legs = await planLegs(ctx, cid, body.source, body.destinations);
      const { groupcall, calls } = await ctx.db.transaction(async (trx) => {
        if (actions) await flowsRepo(trx).create({ id: flowId, customer_id: cid, actions, persist: false, name: 'groupcall' });
        return writeGroupcall(trx, {
          customerId: cid,
          source: body.source,
          legs,
          destinations: body.destinations,
          ringMethod: body.ring_method,
          answerMethod: body.answer_method,
          flowId,
          data: { variables: vars.variables },
        });
      });
      await commandBus(ctx).enqueue('media-app-originate', { type: 'groupcall.start', groupcallId: groupcall.id, customerId: cid });
      const p = eventPublisher(ctx);
      await publishResourceEvent(p, 'groupcall_created', groupcallJson(groupcall) as never).catch(() => undefined);
      for (const c of calls) await p.publish('call_created', cid, c.id, callJson(c)).catch(() => undefined);
      return groupcallJson(groupcall);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/groupcalls',
    tag: 'Groupcall',
    summary: 'List groupcalls',
    permission: 'manager',
    paginated: true,
    response: listOf(groupcallSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await groupcallsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(groupcallJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/groupcalls/:id',
    tag: 'Groupcall',
    summary: 'Get a groupcall',
    permission: 'manager',
    params: idParams,
    response: groupcallSchema,
    handler: async ({ ctx, auth, params }) => groupcallJson(await owned(ctx, auth, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/groupcalls/:id/hangup',
    tag: 'Groupcall',
    summary: 'Hang up the groupcall (every call of it)',
    permission: 'manager',
    params: idParams,
    response: groupcallSchema,
    handler: async ({ ctx, auth, params }) => {
      const g = await owned(ctx, auth, params.id);
      if (g.status === 'hangup') throw new ApiError('STATE_INVALID', 'the groupcall has already ended');
      return groupcallJson(await hangup(ctx, g));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/groupcalls/:id',
    tag: 'Groupcall',
    summary: 'Delete an ended groupcall (soft)',
    permission: 'manager',
    params: idParams,
    response: groupcallSchema,
    handler: async ({ ctx, auth, params }) => {
      const g = await owned(ctx, auth, params.id);
      if (g.status !== 'hangup') throw new ApiError('STATE_INVALID', `the groupcall is ${g.status}; hang it up first`);
      const row = await groupcallsRepo(ctx.db).softDelete(g.id);
      if (!row) throw notFound();
      await publishResourceEvent(eventPublisher(ctx), 'groupcall_deleted', groupcallJson(row) as never).catch(() => undefined);
      return groupcallJson(row);
    },
  }),
];
