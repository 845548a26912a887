/**
 * Supervisor (our extension, docs/pbx.md "Supervisor"): a manager listens to, whispers to or barges
 * into a live call. POST rings `destination` (the supervisor's own phone) from the node that owns the
 * call; its answer joins the call in `mode`. PUT switches the mode, DELETE hangs the supervisor up
 * (the call goes on). The supervision is claimed here in Redis (core/pbx/supervisions.ts), one per
 * call, and carried out by media-app/pbx/supervise.ts.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineRoute, idParams, type AnyRoute } from '../route';
import { ApiError } from '../../core/errors';
import { SUPERVISE_MODES, supervisions, type Supervision } from '../../core/pbx/supervisions';
import { commandBus } from '../calls/bus';
import { planLegs } from '../calls/plan';
import { progressing } from './calls';
import type { AppContext } from '../context';

const mode = z.enum(SUPERVISE_MODES).describe("listen: hears both sides, unheard; whisper: heard by the call's party (the agent) only; barge: heard by both");

const supervisionSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  call_id: z.string(),
  supervisor_call_id: z.string().nullable(),
  mode,
  status: z.enum(['ringing', 'active']),
  node_id: z.string(),
  tm_create: z.string(),
});

const store = (ctx: AppContext) => supervisions(ctx.redis, ctx.config.redisKeyPrefix);

/** The call's live supervision (the call is the customer's and progressing), or 404. */
async function current(ctx: AppContext, customerId: string, callId: string): Promise<Supervision> {
  const s = await store(ctx).get(callId);
  if (!s || s.customer_id !== customerId) throw new ApiError('RESOURCE_NOT_FOUND', 'the call is not supervised');
  return s;
}

export const routes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/calls/:id/supervise',
    tag: 'Call',
    summary: 'Supervise a live call: ring the supervisor, who then listens, whispers or barges (extension)',
    description:
      "`destination` is rung as a POST /calls destination (e.g. the supervisor's extension); its answer joins the call. A whisper reaches this call's party (the agent) only. Unknown call 404, a call not progressing (or ended) 409, supervised already 409, a bad mode 400.",
    permission: 'manager',
    params: idParams,
    body: z.object({ mode, destination: z.object({ type: z.string().max(32), target: z.string().max(1024), target_name: z.string().max(255).optional() }) }),
    response: supervisionSchema,
    status: 201,
    handler: async ({ ctx, auth, params, body }) => {
      const call = await progressing(ctx, auth, params.id);
      const bus = commandBus(ctx);
      const node = await bus.callOwner(call.id);
      if (!node) throw new ApiError('CALL_NOT_FOUND', 'the call is not live on any node');
      const [leg] = await planLegs(ctx, auth.customerId, { type: 'extension', target: 'supervise' }, [body.destination]);
      const rec: Supervision = {
        id: randomUUID(),
        customer_id: auth.customerId,
        call_id: call.id,
        supervisor_call_id: null,
        mode: body.mode,
        status: 'ringing',
        node_id: node,
        tm_create: new Date().toISOString(),
      };
      if (!(await store(ctx).claim(rec))) throw new ApiError('STATE_INVALID', 'the call is supervised already');
      const destination = { type: leg!.destination.type, target: leg!.destination.target };
      await bus.toNode(node, { type: 'supervise.start', supervisionId: rec.id, callId: call.id, customerId: auth.customerId, mode: body.mode, destination });
      return rec;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/calls/:id/supervise',
    tag: 'Call',
    summary: "The call's supervision (extension)",
    permission: 'manager',
    params: idParams,
    response: supervisionSchema,
    handler: async ({ ctx, auth, params }) => current(ctx, auth.customerId, params.id),
  }),
  defineRoute({
    method: 'put',
    path: '/calls/:id/supervise',
    tag: 'Call',
    summary: "Switch the supervision's mode (extension)",
    description: 'Not supervised 404; a supervisor still ringing joins in the new mode.',
    permission: 'manager',
    params: idParams,
    body: z.object({ mode }),
    response: supervisionSchema,
    handler: async ({ ctx, auth, params, body }) => {
      const s = await current(ctx, auth.customerId, params.id);
      const next = { ...s, mode: body.mode };
      // still ringing: the node reads the stored mode when the supervisor answers
      if (s.status === 'ringing') await store(ctx).put(next);
      await commandBus(ctx).toNode(s.node_id, { type: 'supervise.mode', callId: s.call_id, supervisionId: s.id, mode: body.mode });
      return next;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/calls/:id/supervise',
    tag: 'Call',
    summary: "End the supervision: the supervisor's call is hung up, the call goes on (extension)",
    permission: 'manager',
    params: idParams,
    response: supervisionSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await current(ctx, auth.customerId, params.id);
      await commandBus(ctx).toNode(s.node_id, { type: 'supervise.stop', callId: s.call_id, supervisionId: s.id });
      return s;
    },
  }),
];
