/**
 * What the live eval suites share (test/evals/run, checks-live, versions-run): an ai_talk agent on the
 * OpenAI-compatible stand-in behind a number, an evals worker dialling the platform's SIP edge, and a
 * run posted over the API and read until it ends.
 */
import request from 'supertest';
import pino from 'pino';
import { parseActions } from '../../core/flow';
import { flowsRepo } from '../../core/repos/flows';
import { numbersRepo } from '../../core/repos/numbers';
import { aisRepo, type AiInput } from '../../core/repos/ais';
import type { EgressPolicy } from '../../core/net';
import { loadEvalsConfig } from '../../evals/config';
import { EvalWorker } from '../../evals/worker';
import type { Fixture, TestApp } from '../api';
import { until } from '../media-app/harness';
import { storageBackend } from '../../core/storage/backend';

/** The suite's app and the customer whose token it calls the API with. */
export interface EvalsApi {
  t: TestApp;
  f: Fixture;
}

/** The app and customer `get` answers when a helper runs (a suite's `before` makes them). */
export const evalsApiOf = (get: () => EvalsApi): EvalsApi => ({
  get t() {
    return get().t;
  },
  get f() {
    return get().f;
  },
});

/** `r` with the customer's bearer token. */
export const authed = (api: EvalsApi, r: request.Test): request.Test => r.set('Authorization', `Bearer ${api.f.token}`);

/** An AI of the customer's on the stand-in at `llmUrl` (ends a turn after 0.5 s of silence); `over` changes any field. */
export async function standInAi(api: EvalsApi, llmUrl: string, over: Partial<AiInput> = {}): Promise<{ id: string }> {
  return aisRepo(api.t.ctx.db).create(api.f.customer.id, {
    name: 'desk',
    init_prompt: 'You answer questions about the shop.',
    engine_model: 'openai.gpt-test',
    engine_url: llmUrl,
    tool_names: ['all'],
    vad_config: { stop_secs: 0.5 },
    ...over,
  });
}

/** answer → ai_talk with the AI for 40 s (`more` in its option) → hangup. */
export const aiTalkActions = (aiId: string, more: Record<string, unknown> = {}): unknown[] => [
  { type: 'answer' },
  { type: 'ai_talk', option: { assistance_type: 'ai', assistance_id: aiId, duration: 40, ...more } },
  { type: 'hangup' },
];

/** A virtual number of the customer's whose flow is `actions` (none: no flow at all). */
export async function numberWithFlow(api: EvalsApi, number: string, actions?: unknown[]): Promise<void> {
  const { db } = api.t.ctx;
  const flow = actions && (await flowsRepo(db).create({ customer_id: api.f.customer.id, actions: parseActions(actions) }));
  await numbersRepo(db).create({ customer_id: api.f.customer.id, number, type: 'virtual', ...(flow ? { call_flow_id: flow.id } : {}) });
}

/**
 * An evals worker, started, dialling the SIP edge at 127.0.0.1:`sipPort` (polls every 100 ms, waits 10 s
 * for the answer and for the records to settle); `config` adds to its configuration; `env` and
 * `egress` go to the worker as they are (the judge reaches its vendor through `egress`).
 */
export function startEvalWorker(api: EvalsApi, sipPort: number, opts: { config?: Record<string, string>; env?: NodeJS.ProcessEnv; egress?: EgressPolicy } = {}): EvalWorker {
  const config = loadEvalsConfig({ EVALS_SIP_EDGE: `127.0.0.1:${sipPort}`, EVALS_POLL_MS: '100', EVALS_SETTLE_MS: '10000', EVALS_ANSWER_TIMEOUT_MS: '10000', ...opts.config });
  const { db, redis } = api.t.ctx;
  const { env, egress } = opts;
  // the calls' audio goes where the suite's control-api reads it (its DATA_DIR)
  const storage = storageBackend(api.t.ctx.config).files;
  const worker = new EvalWorker({ db, redis, config, logger: pino({ level: 'silent' }), storage, ...(env ? { env } : {}), ...(egress ? { egress } : {}) });
  worker.start();
  return worker;
}

/** Posts a scenario (name, target, caller, checks) and answers its id. */
export async function postEvalScenario(api: EvalsApi, body: Record<string, unknown>): Promise<string> {
  return (await authed(api, request(api.t.app).post('/v1.0/eval_scenarios')).send(body).expect(200)).body.id as string;
}

/** Posts a run (`body`: scenario_ids and the rest) and answers its id. */
export async function postEvalRun(api: EvalsApi, body: Record<string, unknown>): Promise<string> {
  return (await authed(api, request(api.t.app).post('/v1.0/eval_runs')).send(body).expect(200)).body.id as string;
}

/** The run read over the API once it is no longer running. */
export async function evalRunEnded<R>(api: EvalsApi, runId: string, timeoutMs = 90_000): Promise<R> {
  return until(
    async () => {
      const r = await authed(api, request(api.t.app).get(`/v1.0/eval_runs/${runId}`)).expect(200);
      return r.body.status === 'running' ? null : (r.body as R);
    },
    timeoutMs,
    'the run ended',
  );
}
