/**
 * /eval_runs: runs of eval scenarios (issue 56, docs/evals.md). POST keeps a copy of the scenarios
 * and leaves the run `running` for an evals worker (evals/worker.ts) to claim; its simulated callers
 * dial the targets through the SIP edge and the results fill in as calls end.
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { evalCallResult, evalRunInput, EVAL_RUN_STATUSES } from '../../core/evals/schema';
import { evalScenariosRepo } from '../../core/repos/eval-scenarios';
import { evalRunsRepo, evalRunJson } from '../../core/repos/eval-runs';
import { numbersRepo } from '../../core/repos/numbers';
import { legacyTime, listOf, uuidOut } from './schemas';

/** At most this many calls in one run (scenarios × calls). */
const MAX_RUN_CALLS = 200;

const runSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  status: z.enum(EVAL_RUN_STATUSES),
  scenario_ids: z.array(uuidOut()),
  calls: z.number().int(),
  concurrency: z.number().int(),
  error: z.string().describe('why the run failed, when it did'),
  results: z.array(evalCallResult),
  pass_rate: z.number().nullable().describe('share of the calls so far whose checks all passed; null before the first'),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_end: legacyTime(),
});
const tag = 'EvalRun';

export const routes = [
  defineRoute({
    method: 'post',
    path: '/eval_runs',
    tag,
    summary: 'Run eval scenarios: each call a simulated caller over SIP and RTP through the edge',
    permission: 'manager',
    body: evalRunInput,
    response: runSchema,
    handler: async ({ ctx, auth, body }) => {
      const ids = [...new Set(body.scenario_ids)];
      if (ids.length * body.calls > MAX_RUN_CALLS) throw invalidArgument(`a run places at most ${MAX_RUN_CALLS} calls (scenarios × calls)`, [{ field: 'calls', issue: 'too many calls' }]);
      const found = await evalScenariosRepo(ctx.db).many(auth.customerId, ids);
      const absent = ids.filter((id) => !found.some((s) => s.id === id));
      if (absent.length) throw notFound('RESOURCE_NOT_FOUND', `eval scenario not found: ${absent.join(', ')}`);
      // a number may have changed hands since the scenario was written: a run dials only the customer's own
      const numbers = numbersRepo(ctx.db);
      for (const s of found) {
        if ((await numbers.getByNumber(s.target.target))?.customer_id !== auth.customerId)
          throw invalidArgument(`the target of eval scenario ${s.id} is no longer a number of this customer`, [{ field: 'scenario_ids', issue: 'target not a number of this customer' }]);
      }
      const scenarios = ids.map((id) => found.find((s) => s.id === id)!).map(({ id, name, target, caller, checks }) => ({ id, name, target, caller, checks }));
      return evalRunJson(await evalRunsRepo(ctx.db).create(auth.customerId, { scenarios, calls: body.calls, concurrency: body.concurrency }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/eval_runs',
    tag,
    summary: 'List eval runs',
    permission: 'agent',
    paginated: true,
    response: listOf(runSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await evalRunsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(evalRunJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/eval_runs/:id',
    tag,
    summary: 'Get an eval run with its results so far',
    permission: 'agent',
    params: idParams,
    response: runSchema,
    handler: async ({ ctx, auth, params }) => {
      const r = await evalRunsRepo(ctx.db).get(auth.customerId, params.id);
      if (!r) throw notFound('RESOURCE_NOT_FOUND', 'eval run not found');
      return evalRunJson(r);
    },
  }),
];
