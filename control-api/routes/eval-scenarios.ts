/**
 * /eval_scenarios: a customer's voice agent eval scenarios (issue 56, docs/evals.md). The body is
 * core/evals/schema.ts's `evalScenarioInput`, the same schema the runner (evals/) reads; the target
 * number must be one of the customer's. Delete is soft.
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { evalCallerSchema, evalCheckSchema, evalScenarioInput, evalTargetSchema, type EvalScenarioInput } from '../../core/evals/schema';
import { evalScenariosRepo, evalScenarioJson } from '../../core/repos/eval-scenarios';
import { resolveTarget } from '../../core/evals/targets';
import type { AppContext } from '../context';
import { legacyTime, listOf, uuidOut } from './schemas';

const scenarioSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  name: z.string(),
  target: evalTargetSchema,
  caller: evalCallerSchema,
  checks: z.array(evalCheckSchema),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});
const missing = () => notFound('RESOURCE_NOT_FOUND', 'eval scenario not found');
const tag = 'EvalScenario';

/** The simulated caller dials the target through the SIP edge: only under a number of this customer's (core/evals/targets.ts). */
async function checkTarget(ctx: AppContext, customerId: string, input: EvalScenarioInput): Promise<void> {
  const r = await resolveTarget(ctx.db, customerId, input.target);
  if ('refused' in r) throw invalidArgument(`target.target: ${r.refused}`, [{ field: 'target.target', issue: r.issue }]);
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/eval_scenarios',
    tag,
    summary: 'Create an eval scenario (a scripted caller and checks against a number)',
    permission: 'manager',
    body: evalScenarioInput,
    response: scenarioSchema,
    handler: async ({ ctx, auth, body }) => {
      await checkTarget(ctx, auth.customerId, body);
      return evalScenarioJson(await evalScenariosRepo(ctx.db).create(auth.customerId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/eval_scenarios',
    tag,
    summary: 'List eval scenarios',
    permission: 'agent',
    paginated: true,
    response: listOf(scenarioSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await evalScenariosRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(evalScenarioJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/eval_scenarios/:id',
    tag,
    summary: 'Get an eval scenario',
    permission: 'agent',
    params: idParams,
    response: scenarioSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await evalScenariosRepo(ctx.db).get(auth.customerId, params.id);
      if (!s) throw missing();
      return evalScenarioJson(s);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/eval_scenarios/:id',
    tag,
    summary: 'Replace an eval scenario (runs already made keep the scenario as it was)',
    permission: 'manager',
    params: idParams,
    body: evalScenarioInput,
    response: scenarioSchema,
    handler: async ({ ctx, auth, params, body }) => {
      await checkTarget(ctx, auth.customerId, body);
      const s = await evalScenariosRepo(ctx.db).update(auth.customerId, params.id, body);
      if (!s) throw missing();
      return evalScenarioJson(s);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/eval_scenarios/:id',
    tag,
    summary: 'Delete an eval scenario (soft)',
    permission: 'manager',
    params: idParams,
    response: scenarioSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = await evalScenariosRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!s) throw missing();
      return evalScenarioJson(s);
    },
  }),
];
