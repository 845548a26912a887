/**
 * What the live eval suites share (test/evals: run, checks-live, versions-run, targets, goal-caller,
 * background, agent-kinds, agent-s2s): their set-up (`useLiveEvals`: the platform, the LLM stand-in, the
 * app with a customer whose trunk is loopback, the worker closed after), an ai_talk agent on the
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
import { eventStreamKey } from '../../core/events/bus';
import { useTestApp, type Fixture, type TestApp } from '../api';
import { until, type Platform } from '../media-app/harness';
import { useLiveAiStack } from '../ai/turn-calls';
import type { LlmServer, LlmServerOptions } from '../llm-server';
import { loopbackTrunk } from '../trunks';
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

/** A live evals suite's app and customer (filled in by its hooks), its worker and its requests' auth. */
export interface EvalsSuite extends EvalsApi {
  /** the evals worker a test started (at most one at a time): closed after the suite, before the app */
  worker: EvalWorker | undefined;
  /** `r` with the customer's bearer token */
  auth: (r: request.Test) => request.Test;
}

/** A live evals suite on the LLM stand-in: its platform (sip-server and media-app) and the stand-in besides. */
export interface LiveEvals extends EvalsSuite {
  p: Platform;
  llm: LlmServer;
}

/**
 * Mocha hooks of a live evals suite, registered after its platform's: the test app (no rate limits) with
 * a customer whose trunk is loopback (named from `prefix`), so the edge takes the evals callers' calls as
 * that customer's; after the suite the worker a test left in `worker` is closed, then the app. `ready`
 * gets the suite once up; the answer's fields are read when a hook or test runs, never before.
 */
export function useEvalsCustomer(prefix: string, ready: (s: EvalsSuite) => void = () => undefined): EvalsSuite {
  const s = { worker: undefined, auth: (r: request.Test) => authed(s, r) } as EvalsSuite;
  after(async () => {
    await s.worker?.close();
    s.worker = undefined;
  });
  useTestApp(({ t, f }) => Object.assign(s, { t, f }));
  before(async () => {
    await loopbackTrunk(s.t.ctx.db, s.f.customer.id, `tr${prefix.replace(/[^a-z0-9]/gi, '')}${Date.now()}`);
    ready(s);
  });
  return s;
}

/**
 * The whole set-up of a live evals suite over SIP against ai_talk on the LLM stand-in: `useLiveAiStack`
 * (a scratch folder named from `prefix`, the stand-in answering by `respond`, a platform that reaches
 * it), then `useEvalsCustomer`. A suite on another stand-in calls its stack's hooks and `useEvalsCustomer`.
 */
export function useLiveEvals(prefix: string, respond?: LlmServerOptions['respond'], ready: (s: LiveEvals) => void = () => undefined): LiveEvals {
  useLiveAiStack(prefix, respond ? { respond } : {}, ({ p, llm }) => Object.assign(s, { p, llm }));
  const s = useEvalsCustomer(prefix, () => ready(s)) as LiveEvals;
  return s;
}

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
 * An evals worker, started, dialling the SIP edge of `p` at 127.0.0.1 (polls every 100 ms, waits 10 s
 * for the answer and for the records to settle) and watching `p`'s event stream (its REDIS_KEY_PREFIX);
 * `config` adds to its configuration; `env` and `egress` go to the worker as they are (the judge reaches
 * its vendor through `egress`).
 */
export function startEvalWorker(api: EvalsApi, p: Pick<Platform, 'sipPort' | 'config'>, opts: { config?: Record<string, string>; env?: NodeJS.ProcessEnv; egress?: EgressPolicy } = {}): EvalWorker {
  const config = loadEvalsConfig({ EVALS_SIP_EDGE: `127.0.0.1:${p.sipPort}`, EVALS_POLL_MS: '100', EVALS_SETTLE_MS: '10000', EVALS_ANSWER_TIMEOUT_MS: '10000', ...opts.config });
  const { db, redis } = api.t.ctx;
  const { env, egress } = opts;
  // the calls' audio goes where the suite's control-api reads it (its DATA_DIR)
  const storage = storageBackend(api.t.ctx.config).files;
  const worker = new EvalWorker({
    db,
    redis,
    eventStream: eventStreamKey(p.config.redisKeyPrefix),
    config,
    logger: pino({ level: 'silent' }),
    storage,
    ...(env ? { env } : {}),
    ...(egress ? { egress } : {}),
  });
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
