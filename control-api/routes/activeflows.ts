/**
 * /activeflows: runs of a flow. POST writes the record (status running, reference_type api) and
 * sends activeflow.start to the shared queue; a media-app node runs it. Stop is idempotent: an
 * ended activeflow answers 200 as it is; a running one gets activeflow.stop on the queue of the node
 * running it, or, when no live node runs it (start not yet consumed, node gone), is ended here.
 * There is no public continue (in VoIPbin too, a block's continue is internal).
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, invalidArgument } from '../../core/errors';
import { EMPTY_UUID, newId } from '../../core/ids';
import { claimClientId } from '../../core/client-ids';
import { checkClientVariables, parseActions, type Action } from '../../core/flow';
import { checkAiVersionPins } from '../flow-ai-versions';
import { flowsRepo } from '../../core/repos/flows';
import { activeflowJson, activeflowsRepo, type ActiveflowRow } from '../../core/repos/activeflows';
import { startStoredActiveflow } from '../../core/flow/stored-activeflow';
import { commandBus } from '../calls/bus';
import type { AppContext } from '../context';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import { assertEgressUrl } from '../egress-field';
import { actionSchema } from './flows';
import { listOf, rfc3339OrNull, uuidOut } from './schemas';

export const activeflowSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  flow_id: uuidOut(),
  status: z.enum(['', 'running', 'ended']),
  reference_type: z.string(),
  reference_id: uuidOut(),
  reference_activeflow_id: uuidOut(),
  on_complete_flow_id: uuidOut(),
  webhook_uri: z.string(),
  webhook_method: z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']),
  current_action: actionSchema.nullable(),
  forward_action_id: z.string(),
  executed_actions: z.array(actionSchema),
  variables: z.record(z.string(), z.string()),
  complete_count: z.number(),
  end_reason: z.string().describe("why it ended: finished, stop_action, stopped, call_hangup, error, limit; '' while running"),
  error: z.string(),
  tm_create: rfc3339OrNull(),
  tm_update: rfc3339OrNull(),
  tm_delete: rfc3339OrNull(),
});

const createBody = z.object({
  id: uuid().optional().describe('client-supplied id; generated when omitted'),
  flow_id: uuid().optional().describe('flow to run; takes precedence over actions'),
  actions: z.array(z.unknown()).optional().describe('inline actions, when no flow_id'),
  variables: z.unknown().optional().describe('object of string → string (100 keys, 64 KB, 32 KB per value; svc. keys ignored)'),
  webhook_uri: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .or(z.literal(''))
    .optional(),
  webhook_method: z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']).optional(),
});

const activeflowNotFound = () => new ApiError('ACTIVEFLOW_NOT_FOUND', 'activeflow not found');

/**
 * Stops a running activeflow: activeflow.stop on the queue of the node running it, or, when no live
 * node runs it (start not yet consumed, node gone), ends it here. An ended one is returned as it is.
 */
async function stopActiveflow(ctx: AppContext, a: ActiveflowRow): Promise<ActiveflowRow> {
  if (a.status !== 'running') return a;
  const bus = commandBus(ctx);
  const node = (await bus.activeflowOwner(a.id)) ?? (a.reference_type === 'call' ? await bus.callOwner(a.reference_id) : null);
  if (node) {
    await bus.toNode(node, { type: 'activeflow.stop', activeflowId: a.id }, `activeflow-stop-${a.id}`);
    return a;
  }
  return (await activeflowsRepo(ctx.db).endOrphan(a.id, 'stopped')) ?? a;
}

async function owned(ctx: AppContext, customerId: string, id: string): Promise<ActiveflowRow> {
  const a = await activeflowsRepo(ctx.db).getOwned(customerId, id);
  if (!a) throw activeflowNotFound();
  return a;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/activeflows',
    tag: 'Activeflow',
    summary: 'List activeflows',
    permission: 'manager',
    paginated: true,
    response: listOf(activeflowSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await activeflowsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(activeflowJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/activeflows',
    tag: 'Activeflow',
    summary: 'Start an activeflow from flow_id or inline actions',
    permission: 'manager',
    body: createBody,
    status: 201,
    response: activeflowSchema,
    handler: async ({ ctx, auth, body }) => {
      if (body.flow_id === undefined && body.actions === undefined) {
        throw invalidArgument('flow_id or actions is required', [{ field: 'flow_id', issue: 'required when actions is absent' }]);
      }
      assertEgressUrl(ctx, 'webhook_uri', body.webhook_uri);
      const vars = checkClientVariables(body.variables);
      if (vars.problems.length > 0) {
        throw invalidArgument(
          `${vars.problems[0]!.field}: ${vars.problems[0]!.message}`,
          vars.problems.map((p) => ({ field: p.field, issue: p.message })),
        );
      }
      let actions: Action[] | null = null;
      let flowId: string;
      let onComplete = EMPTY_UUID;
      if (body.flow_id !== undefined) {
        const flow = await flowsRepo(ctx.db).getOwned(auth.customerId, body.flow_id);
        if (!flow) throw new ApiError('FLOW_NOT_FOUND', 'flow not found');
        flowId = flow.id;
        onComplete = flow.on_complete_flow_id;
      } else {
        actions = parseActions(body.actions, { egress: ctx.egress });
        await checkAiVersionPins(ctx.db, auth.customerId, actions);
        flowId = newId();
      }
      const id = await claimClientId(ctx.db, 'activeflows', auth.customerId, body.id, 'activeflow');
      const spec = {
        id,
        customerId: auth.customerId,
        flowId,
        onCompleteFlowId: onComplete,
        referenceType: 'api' as const,
        referenceId: EMPTY_UUID,
        variables: vars.variables,
        webhook: { uri: body.webhook_uri ?? '', method: body.webhook_method ?? '' },
      };
      // an inline flow is written with its activeflow, in one transaction
      const row = await startStoredActiveflow(
        ctx.db,
        commandBus(ctx),
        spec,
        actions ? async (trx) => void (await flowsRepo(trx).create({ id: flowId, customer_id: auth.customerId, actions: actions!, persist: false, name: 'activeflow' })) : undefined,
      );
      return activeflowJson(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/activeflows/:id',
    tag: 'Activeflow',
    summary: 'Get an activeflow',
    permission: 'manager',
    params: idParams,
    response: activeflowSchema,
    handler: async ({ ctx, auth, params }) => activeflowJson(await owned(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'post',
    path: '/activeflows/:id/stop',
    tag: 'Activeflow',
    summary: 'Stop an activeflow (idempotent: 200 when already stopped)',
    permission: 'manager',
    params: idParams,
    response: activeflowSchema,
    handler: async ({ ctx, auth, params }) => activeflowJson(await stopActiveflow(ctx, await owned(ctx, auth.customerId, params.id))),
  }),
  defineRoute({
    method: 'delete',
    path: '/activeflows/:id',
    tag: 'Activeflow',
    summary: 'Delete an activeflow: a running one is stopped first; it leaves the list (204)',
    permission: 'manager',
    params: idParams,
    response: z.object({}),
    status: 204,
    handler: async ({ ctx, auth, params }) => {
      const a = await stopActiveflow(ctx, await owned(ctx, auth.customerId, params.id));
      const gone = await activeflowsRepo(ctx.db).softDelete(auth.customerId, a.id);
      if (!gone) throw activeflowNotFound();
      await publishResourceEvent(eventPublisher(ctx), 'activeflow_deleted', activeflowJson(gone)).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not publish activeflow_deleted'));
      return undefined;
    },
  }),
];
