/**
 * One eval run, carried by the worker that claimed it: scenarios × calls simulated calls, at most
 * `concurrency` at once, each played (call.ts), observed (observe.ts) and judged (checks.ts); the
 * results are written after every call, so GET /eval_runs/{id} shows them as they come. The run ends
 * `finished` when every call was placed and judged (whatever the verdicts), `failed` when a call could
 * not be placed (refused by the edge, not found on the platform), did not run the AI version it was
 * pinned to, or the run was aborted. A run over AI versions places every call once per version, each
 * under a SIP Call-ID pinned to its version (core/repos/eval-pins.ts) before the INVITE goes out.
 * Both audio tracks of every answered call are written to the platform's object store (call-audio.ts).
 */
import type { Db } from '../core/db/knex';
import type { Logger } from '../core/logger';
import { evalRunsRepo, type EvalRunRow } from '../core/repos/eval-runs';
import type { EvalRunScenario } from '../core/repos/eval-scenarios';
import { evalPinsRepo } from '../core/repos/eval-pins';
import type { EvalCallResult, EvalTranscriptLine } from '../core/evals/schema';
import type { EvalsConfig } from './config';
import { playCall } from './call';
import { newCallId } from './sip-caller';
import { observeCall } from './observe';
import type { CallEvents } from './call-events';
import type { RunEvents } from './run-events';
import { judgeChecks } from './checks';
import { withoutAiTalk } from './agent-kind';
import { callerTurns } from './caller-turns';
import { evalReachRepo } from '../core/repos/eval-reach';
import { callFacts, callerLlm } from './call-facts';
import { attachHeard } from './hearing';
import { egressPolicyFor, type EgressPolicy } from '../core/net';
import { resolveTarget } from '../core/evals/targets';
import { StartPacing } from './start-pacing';
import type { ObjectStore } from '../core/storage/local';
import { storeCallAudio } from './call-audio';
import type { PlayedCall } from './call';
import { interruptionsOf, silencesOf } from './timeline';

export interface RunDeps {
  db: Db;
  config: EvalsConfig;
  logger: Logger;
  /** this worker's name (the run's claimed_by) */
  worker: string;
  /** wakes the observations' settle waits */
  events: CallEvents;
  /** the run's customer events (eval_run_progressed, _finished, _failed) */
  runEvents: RunEvents;
  /** the platform's settings (the LLM vendors' keys a judge check may use; default process.env) */
  env?: NodeJS.ProcessEnv;
  /** what a judge check's request to the customer's LLM vendor goes through (default: the policy of `env`) */
  egress?: EgressPolicy;
  /** where the calls' audio tracks go: the platform's object store (core/storage `files`), the one control-api serves them from */
  storage: ObjectStore;
}

/** One call to place: a scenario, and the AI version its ai_talk runs when the run is over versions. */
interface Placed {
  scenario: EvalRunScenario;
  version?: number;
}

/** The run's calls: every scenario × calls, each once per version (the versions alternate, so they meet the same load). */
export function callsOf(run: Pick<EvalRunRow, 'scenarios' | 'calls' | 'versions'>): Placed[] {
  const versions: (number | undefined)[] = run.versions.length ? run.versions : [undefined];
  return run.scenarios.flatMap((scenario) => Array.from({ length: run.calls }, () => versions.map((version) => (version === undefined ? { scenario } : { scenario, version }))).flat());
}

/** Places the call; a pinned one under a Call-ID made here, its pin written before the INVITE goes out. */
async function place(deps: RunDeps, run: EvalRunRow, p: Placed, signal: AbortSignal) {
  const env = deps.env ?? process.env;
  const callerDeps = { ...deps.config, goalLlm: callerLlm({ db: deps.db, env, egress: deps.egress ?? egressPolicyFor(env) }, run.customer_id, p.scenario.caller) };
  if (p.version === undefined || !run.ai_id) return playCall(p.scenario, callerDeps, signal);
  const sipCallId = newCallId();
  await evalPinsRepo(deps.db).pin({ customerId: run.customer_id, runId: run.id, sipCallId, aiId: run.ai_id, version: p.version });
  return playCall(p.scenario, callerDeps, signal, sipCallId);
}

async function oneCall(deps: RunDeps, run: EvalRunRow, p: Placed, signal: AbortSignal): Promise<EvalCallResult> {
  const result = await judgedCall(deps, run, p, signal);
  if (p.version === undefined) return result;
  const pinned = { ...result, ai_version: p.version };
  if (pinned.ended_by === 'refused' || pinned.ended_by === 'error' || (await evalPinsRepo(deps.db).used(run.customer_id, pinned.sip_call_id))) return pinned;
  // the call never started that AI: its verdicts are not the version's
  return { ...pinned, passed: false, error: `${NOT_APPLIED} ${run.ai_id} ran on the call: version ${p.version} was not applied` };
}

async function judgedCall(deps: RunDeps, run: EvalRunRow, p: Placed, signal: AbortSignal): Promise<EvalCallResult> {
  const { scenario } = p;
  const base = { scenario_id: scenario.id, call_id: '', transcript: [] as EvalTranscriptLine[], turns: [], tool_calls: [], interruptions: [], silences: [], checks: [], passed: false };
  // a flow or AI is dialled under the customer's number that routes to it, looked up before every call
  const reached = await resolveTarget(deps.db, run.customer_id, scenario.target);
  if ('refused' in reached) return { ...base, sip_call_id: '', ended_by: 'refused', error: `the target cannot be dialled: ${reached.refused}` };
  let played;
  try {
    played = await place(deps, run, { ...p, scenario: { ...scenario, target: { type: 'number', target: reached.number } } }, signal);
  } catch (e) {
    return { ...base, sip_call_id: '', ended_by: 'error', error: `the simulated caller failed: ${(e as Error).message}` };
  }
  if (played.endedBy === 'refused') return { ...base, sip_call_id: played.sipCallId, ended_by: 'refused', error: played.error ?? 'refused' };
  const audio = await keepAudio(deps, run, played);
  const seen = await observeCall(deps, run.customer_id, played.sipCallId, played.answeredAt, deps.config.settleMs, signal);
  const timeline = timelineOf(played);
  if (!seen)
    return {
      ...base,
      sip_call_id: played.sipCallId,
      ended_by: 'error',
      error: 'the call was answered but no call of this customer has its Call-ID',
      transcript: played.callerLines,
      ...timeline,
      ...audio,
    };
  const merged = [...played.callerLines, ...seen.agentLines].sort((a, b) => a.t_ms - b.t_ms);
  const transcript = played.heardSegments ? attachHeard(merged, played.heardSegments) : merged;
  const env = deps.env ?? process.env;
  // an agent outside the platform (ConversationRelay, Media Streams): no ai_talk records its text and
  // turns, so its turns are measured at the caller (caller-turns.ts)
  const aiTalk = !!(await evalReachRepo(deps.db).aiOfCall(run.customer_id, seen.callId));
  const turns = aiTalk ? seen.turns : callerTurns([...played.callerSpeech, ...(played.callerDigits ?? [])], played.heard);
  const facts = await callFacts({ db: deps.db, env, egress: deps.egress ?? egressPolicyFor(env) }, run.customer_id, seen.callId, played, { transcript, turns });
  const judged = await judgeChecks(scenario.checks, facts, { judgeTimeoutMs: deps.config.judgeTimeoutMs, signal });
  const checks = aiTalk ? judged : withoutAiTalk(scenario.checks, judged, { lines: seen.relayLines, loss: seen.relayLoss });
  return {
    scenario_id: scenario.id,
    call_id: seen.callId,
    sip_call_id: played.sipCallId,
    ended_by: played.endedBy,
    // the simulated caller failing (its LLM, its recogniser) fails the call, whatever the checks say
    ...(played.error ? { error: played.error } : {}),
    transcript,
    ...(played.heardSegments ? { heard: played.heardSegments } : {}),
    ...(played.goal ? { goal: played.goal } : {}),
    ...audio,
    turns,
    tool_calls: facts.toolCalls,
    ...timeline,
    checks,
    passed: !played.error && checks.every((c) => c.passed),
  };
}

/** What the caller had of both sides of an answered call: who talked over whom, and the dead air (timeline.ts). */
function timelineOf(played: PlayedCall): Pick<EvalCallResult, 'interruptions' | 'silences'> {
  return {
    interruptions: interruptionsOf(played.callerSpeech, played.heard),
    silences: silencesOf([...played.callerSpeech, ...(played.callerDigits ?? [])], played.heard, played.end_ms),
  };
}

/** Both tracks of an answered call, written under the run; the store refusing is said in `audio_error` (and logged): the verdicts stand. */
async function keepAudio(deps: RunDeps, run: EvalRunRow, played: PlayedCall): Promise<Pick<EvalCallResult, 'audio' | 'audio_error'>> {
  if (!played.audio) return {};
  try {
    return { audio: await storeCallAudio(deps.storage, { customerId: run.customer_id, runId: run.id, sipCallId: played.sipCallId }, played.audio) };
  } catch (e) {
    deps.logger.warn({ err: e, run_id: run.id, sip_call_id: played.sipCallId }, "an eval call's audio was not kept");
    return { audio_error: `the call's audio was not kept: ${(e as Error).message}` };
  }
}

const NOT_APPLIED = 'no ai_talk of AI';

/** Why a run whose calls all ended failed: calls not placed or found, not running their pinned version, or their simulated caller failing; '' when none. */
function runError(results: EvalCallResult[]): string {
  const unplaced = results.filter((r) => r.ended_by === 'refused' || r.ended_by === 'error').length;
  if (unplaced) return `${unplaced} of ${results.length} call(s) could not be placed or found`;
  const unpinned = results.filter((r) => r.error?.startsWith(NOT_APPLIED)).length;
  if (unpinned) return `${unpinned} of ${results.length} call(s) did not run the AI version they were pinned to`;
  const callers = results.filter((r) => r.error).length;
  return callers ? `the simulated caller failed on ${callers} of ${results.length} call(s) (see each call's error)` : '';
}

/**
 * Drops the run's pins before its end is written, so whoever sees the run ended sees no pin of it (issue 56:
 * "a run's pins go when it ends"). Its calls are over: nothing takes a pin any more. A drop that fails is
 * logged and the run still ends: a pin left behind is never taken again (its Call-ID was this run's alone).
 */
async function dropPins(deps: RunDeps, runId: string): Promise<void> {
  await evalPinsRepo(deps.db)
    .dropRun(runId)
    .catch((err: unknown) => deps.logger.warn({ err, run_id: runId }, "could not drop an ended run's pins"));
}

/** Why a run was stopped: the reason its signal was aborted with (the worker closing, its lease lost). */
export function stopReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  const text = r instanceof Error ? r.message : typeof r === 'string' ? r : '';
  return text && !(r instanceof DOMException && r.name === 'AbortError') ? text : 'the run was stopped before it ended (no reason given)';
}

/**
 * Carries a claimed run to its end; `signal` aborts it (the worker closing, its lease lost): calls in
 * flight hang up, the run fails with the signal's reason (stopReason).
 */
export async function carryRun(deps: RunDeps, run: EvalRunRow, signal: AbortSignal): Promise<void> {
  const repo = evalRunsRepo(deps.db);
  const queue = callsOf(run);
  const planned = queue.length;
  const results: EvalCallResult[] = [];
  // a lane that fails stops the others: their calls hang up and the run ends failed, once all have stopped
  const broken = new AbortController();
  const stop = AbortSignal.any([signal, broken.signal]);
  // each result is saved and told in the order the calls ended, one at a time: a lane's event names its own
  // call and count, and no save lands after a later one
  let reporting: Promise<unknown> = Promise.resolve();
  const report = (result: EvalCallResult): Promise<unknown> => {
    results.push(result);
    const upTo = results.slice();
    const next = reporting.then(async () => {
      // a run this worker no longer holds (swept, its lease lost) is not its to tell about
      if (await repo.saveResults(run.id, deps.worker, upTo)) await deps.runEvents.progressed(run, planned, upTo);
    });
    reporting = next.catch(() => undefined);
    return next;
  };
  const pacing = new StartPacing(deps.config.callSpacingMs);
  const lanes = Array.from({ length: Math.min(run.concurrency, queue.length) }, async () => {
    try {
      for (let s = queue.shift(); s && !stop.aborted; s = queue.shift()) {
        // a run stopping while a call waits for its slot: the call is not placed (the run ends failed, stopReason)
        if (
          !(await pacing.slot(stop).then(
            () => true,
            () => false,
          ))
        )
          break;
        await report(await oneCall(deps, run, s, stop));
      }
    } catch (e) {
      broken.abort();
      throw e;
    }
  });
  const outcomes = await Promise.allSettled(lanes);
  await reporting;
  const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failure) {
    deps.logger.error({ err: failure.reason as unknown, run_id: run.id }, 'eval run failed');
    const why = 'the runner failed (see the evals worker log)';
    await dropPins(deps, run.id);
    if (await repo.end(run.id, deps.worker, 'failed', results, why)) await deps.runEvents.ended(run, 'failed', why, results);
    return;
  }
  const error = signal.aborted ? stopReason(signal) : runError(results);
  await dropPins(deps, run.id);
  // the row is the record: its end is published only when this worker wrote it (else whoever ended the row did)
  if (await repo.end(run.id, deps.worker, error ? 'failed' : 'finished', results, error)) await deps.runEvents.ended(run, error ? 'failed' : 'finished', error, results);
  deps.logger.info({ run_id: run.id, calls: results.length, passed: results.filter((r) => r.passed).length, error }, 'eval run ended');
}
