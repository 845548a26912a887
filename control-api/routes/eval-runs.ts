/**
 * /eval_runs: runs of eval scenarios (issue 56, docs/evals.md). POST keeps a copy of the scenarios
 * and leaves the run `running` for an evals worker (evals/worker.ts) to claim; its simulated callers
 * dial the targets through the SIP edge and the results fill in as calls end. GET
 * /eval_runs/{id}/audio/{file} serves a call's audio track that the worker wrote to the object store
 * (core/evals/audio.ts names them), to the run's customer only.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { removeQueuedAudio } from '../../core/evals/audio-removal';
import { evalCallResult, evalRunInput, EVAL_RUN_STATUSES } from '../../core/evals/schema';
import { evalScenariosRepo } from '../../core/repos/eval-scenarios';
import { evalRunsRepo, evalRunJson } from '../../core/repos/eval-runs';
import { resolveTarget } from '../../core/evals/targets';
import { aisRepo } from '../../core/repos/ais';
import { aiVersionsRepo } from '../../core/repos/ai-versions';
import { LATENCY_MOVE_MS, LATENCY_MOVE_SHARE } from '../../core/evals/summary';
import type { AppContext } from '../context';
import { createdPayload, publishRunEvent } from '../../core/evals/events';
import { eventsOf } from '../../core/ai/api';
import { legacyTime, listOf, uuidOut } from './schemas';
import { EVAL_AUDIO_FILE, evalAudioKey, evalAudioPath } from '../../core/evals/audio';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { sendCustomerFileRanges } from '../customer-file';

/** At most this many calls in one run (scenarios × calls). */
const MAX_RUN_CALLS = 200;

const stage = z.object({ n: z.number().int(), p50: z.number(), p95: z.number(), p99: z.number() });
const latencyBlock = z.record(z.string(), stage);
const checkTally = z.object({ scenario_id: uuidOut(), index: z.number().int().describe("the check's place in its scenario"), type: z.string(), passed: z.number().int(), of: z.number().int() });
const summaryBlock = z.object({ calls: z.number().int(), passed: z.number().int(), pass_rate: z.number().nullable(), checks: z.array(checkTally), latency: latencyBlock });
const passes = z.object({ passed: z.number().int(), of: z.number().int() });
const comparison = z.object({
  pass_rate: z.object({ from: z.number().nullable(), to: z.number().nullable() }),
  checks: z.array(checkTally.omit({ passed: true, of: true }).extend({ from: passes, to: passes, moved: z.enum(['better', 'worse']) })).describe('the checks whose pass rate moved'),
  latency: z
    .array(z.object({ stage: z.string(), from: z.object({ p50: z.number(), p95: z.number() }), to: z.object({ p50: z.number(), p95: z.number() }), moved: z.enum(['faster', 'slower']) }))
    .describe(`the stages whose p50 or p95 moved by at least ${LATENCY_MOVE_SHARE * 100} % and ${LATENCY_MOVE_MS} ms`),
});

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
  ai_id: uuidOut().describe('the AI whose versions the run pins (empty UUID: none)'),
  versions: z.array(z.number().int()).describe('the versions run side by side ([]: none)'),
  baseline_run_id: uuidOut().describe('the earlier run this one is compared with (empty UUID: none)'),
  latency: latencyBlock.describe('latency percentiles of every stage over all agent turns of the run'),
  checks: z.array(checkTally).describe("each check's pass count over the run's calls"),
  by_version: z.array(summaryBlock.extend({ version: z.number().int() })).describe('per version: pass rate, pass count of each check, latency percentiles'),
  compare: comparison.extend({ from_version: z.number().int(), to_version: z.number().int() }).nullable().describe('what moved from the first version to the second (null: not two versions)'),
  baseline: comparison.extend({ run_id: uuidOut() }).nullable().describe('what moved from the baseline run to this one (null: no baseline)'),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_end: legacyTime(),
  tm_delete: legacyTime(),
});
const tag = 'EvalRun';

/** The versions a run pins must be versions of an AI of the customer's: each one named in the refusal. */
async function checkVersions(ctx: AppContext, customerId: string, aiId: string, versions: number[]): Promise<void> {
  if (!(await aisRepo(ctx.db).get(customerId, aiId))) throw invalidArgument('ai_id is not an AI of this customer', [{ field: 'ai_id', issue: 'not found' }]);
  const have = await aiVersionsRepo(ctx.db).existing(customerId, aiId, versions);
  const absent = versions.filter((v) => !have.includes(v));
  if (absent.length) throw invalidArgument(`AI ${aiId} has no version ${absent.join(', ')}`, [{ field: 'versions', issue: `no version ${absent.join(', ')}` }]);
}

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
      for (const s of found) {
        const r = await resolveTarget(ctx.db, auth.customerId, s.target);
        if ('refused' in r) throw invalidArgument(`the target of eval scenario ${s.id} cannot be dialled: ${r.refused}`, [{ field: 'scenario_ids', issue: `target ${r.issue}` }]);
      }
      if (ids.length * body.calls * (body.versions?.length ?? 1) > MAX_RUN_CALLS)
        throw invalidArgument(`a run places at most ${MAX_RUN_CALLS} calls (scenarios × calls × versions)`, [{ field: 'versions', issue: 'too many calls' }]);
      if (body.ai_id && body.versions) await checkVersions(ctx, auth.customerId, body.ai_id, body.versions);
      const baseline = body.baseline_run_id ? await evalRunsRepo(ctx.db).get(auth.customerId, body.baseline_run_id) : null;
      if (body.baseline_run_id && !baseline) throw invalidArgument('baseline_run_id is not a run of this customer', [{ field: 'baseline_run_id', issue: 'not found' }]);
      const scenarios = ids.map((id) => found.find((s) => s.id === id)!).map(({ id, name, target, caller, checks }) => ({ id, name, target, caller, checks }));
      const run = await evalRunsRepo(ctx.db).create(auth.customerId, {
        scenarios,
        calls: body.calls,
        concurrency: body.concurrency,
        aiId: body.ai_id,
        versions: body.versions,
        baselineRunId: body.baseline_run_id,
      });
      await publishRunEvent(eventsOf(ctx), 'eval_run_created', createdPayload(run)).catch((err: unknown) => ctx.logger.warn({ err, run_id: run.id }, 'publishing eval_run_created failed'));
      return evalRunJson(run, baseline);
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
      const repo = evalRunsRepo(ctx.db);
      const p = await repo.list(auth.customerId, page);
      const baselines = await repo.many(auth.customerId, [...new Set(p.result.flatMap((r) => (r.baseline_run_id ? [r.baseline_run_id] : [])))]);
      return { result: p.result.map((r) => evalRunJson(r, baselines.find((b) => b.id === r.baseline_run_id) ?? null)), next_page_token: p.next_page_token };
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
      const repo = evalRunsRepo(ctx.db);
      const r = await repo.get(auth.customerId, params.id);
      if (!r) throw notFound('RESOURCE_NOT_FOUND', 'eval run not found');
      return evalRunJson(r, r.baseline_run_id ? await repo.get(auth.customerId, r.baseline_run_id) : null);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/eval_runs/:id',
    tag,
    summary: "Delete an eval run and its calls' audio",
    description:
      "Soft deletion (tm_delete set; the run is no longer listed nor read, and a run naming it as baseline compares with nothing). A running run is refused (409 STATE_INVALID): it ends by itself. The calls' audio tracks are removed from the object store at once; a removal the store refuses is logged and retried by control-api's eval audio sweep (EVALS_AUDIO_SWEEP_MS).",
    permission: 'manager',
    params: idParams,
    response: runSchema,
    errors: [409],
    handler: async ({ ctx, auth, params }) => {
      const r = await evalRunsRepo(ctx.db).remove(auth.customerId, params.id);
      if (!r) throw notFound('RESOURCE_NOT_FOUND', 'eval run not found');
      if (r === 'running') throw stateInvalid('the eval run is running: it can be deleted once it has ended');
      const gone = await removeQueuedAudio({ db: ctx.db, store: storageBackend(ctx.config).files, logger: ctx.logger }, r.id);
      if (gone.failed) ctx.logger.warn({ run_id: r.id, ...gone }, "some of a deleted eval run's audio stays queued for the sweep");
      return evalRunJson(r);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/eval_runs/:id/audio/:file',
    tag,
    summary: "Get one audio track of an eval run's call (the URL in its result's audio)",
    description:
      "A mono 16-bit 8 kHz WAV whose sample i is i/8 ms after the answer: `…-caller.wav` what the simulated caller sent, `…-agent.wav` what it heard. 404 for a run that is not the customer's or a file no call of the run names. Takes one byte range (`Range: bytes=…`, Accept-Ranges: bytes): 206 Partial Content with Content-Range, 416 RANGE_NOT_SATISFIABLE for a range past the end.",
    permission: 'agent',
    params: z.object({
      id: uuid().describe('the eval run'),
      file: z.string().max(64).regex(EVAL_AUDIO_FILE, 'a track file named by a result (<32 hex>-caller.wav or -agent.wav)'),
    }),
    response: z.string().describe('the track (audio/wav)'),
    responseContentTypes: ['audio/wav'],
    errors: [416],
    handler: async ({ ctx, auth, params, req, res }) => {
      const r = await evalRunsRepo(ctx.db).get(auth.customerId, params.id);
      if (!r) throw notFound('RESOURCE_NOT_FOUND', 'eval run not found');
      const path = evalAudioPath(r.id, params.file);
      if (!r.results.some((c) => c.audio?.caller_url === path || c.audio?.agent_url === path)) throw notFound('FILE_NOT_FOUND', 'no call of this eval run has this audio track');
      const key = evalAudioKey(r.customer_id, r.id, params.file);
      const found = await sendCustomerFileRanges(req, res, { filename: params.file, contentType: 'audio/wav' }, (range) => viaStorage(() => storageBackend(ctx.config).files.get(key, range)));
      if (!found) throw notFound('FILE_NOT_FOUND', "the call's audio track is not in storage");
      return undefined;
    },
  }),
];
