/**
 * What a call's checks are judged on beyond its transcript and turns (checks/facts.ts), read from
 * the customer's records of the call (core/repos/eval-reach.ts): each agent reply's record time and
 * whether it was cut, the tool calls, who hung up and what the call was connected or transferred to,
 * and, asked only by a judge check, the customer's LLM vendor: the chat model of the AI configuration
 * ai_talk ran on the call (a team's: its member then speaking), through the egress policy; the goal
 * caller's LLM likewise (callerLlm).
 */
import type { Db } from '../core/db/knex';
import { EVAL_TOOL_RESULT_MAX, type EvalCaller, type EvalToolCall, type EvalTranscriptLine, type EvalTurnResult } from '../core/evals/schema';
import { LlmError, type ChatLlm } from '../core/llm/client';
import { llmFor } from '../core/llm/endpoint';
import type { EgressPolicy } from '../core/net';
import { aisRepo } from '../core/repos/ais';
import { evalReachRepo, type ReachedMessage } from '../core/repos/eval-reach';
import { teamsRepo } from '../core/repos/teams';
import { realtimeModel } from '../core/speech/voices';
import type { PlayedCall } from './call';
import { eachReply } from './observe';
import type { CallFacts } from './checks/facts';

/** Each reply (observe.ts eachReply): when it was recorded, from the caller's answer, and whether it was cut. */
export function repliesOf(messages: ReachedMessage[], answeredAt: number): CallFacts['replies'] {
  return eachReply(messages).map(({ message, latency }) => ({ t_ms: message.tm_create.getTime() - answeredAt, interrupted: latency.interrupted === true }));
}

function parsedArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

type ToolRow = Awaited<ReturnType<ReturnType<typeof evalReachRepo>['toolCalls']>>[number];

/** A tool's result as a call's result keeps it: its first EVAL_TOOL_RESULT_MAX characters, saying when it was cut. */
function keptResult(result: string | null): Pick<EvalToolCall, 'result' | 'result_truncated'> {
  if (result === null || result.length <= EVAL_TOOL_RESULT_MAX) return { result };
  return { result: result.slice(0, EVAL_TOOL_RESULT_MAX), result_truncated: true };
}

/**
 * The call's tool calls, in order: each assistant message's calls (name, arguments parsed), timed by the
 * message's record, with the result of the tool message that names its id (null: none recorded).
 */
export function toolCallsOf(rows: readonly ToolRow[], answeredAt: number): EvalToolCall[] {
  const results = new Map(rows.filter((r) => r.role === 'tool' && r.tool_call_id).map((r) => [r.tool_call_id, r.content ?? '']));
  return rows.flatMap((m) =>
    m.role !== 'assistant'
      ? []
      : ((m.tool_calls ?? []) as { id?: string; function?: { name?: string; arguments?: unknown } }[]).map((c) => ({
          id: c.id ?? '',
          name: c.function?.name ?? '',
          arguments: parsedArguments(c.function?.arguments),
          t_ms: m.tm_create.getTime() - answeredAt,
          ...keptResult(c.id && results.has(c.id) ? results.get(c.id)! : null),
        })),
  );
}

/** The chat model of an AI configuration of the customer's, or why there is none (a speech-to-speech model, no endpoint). */
export async function aiVendor(deps: FactsDeps, customerId: string, aiId: string): Promise<ChatLlm | { error: string }> {
  const ai = await aisRepo(deps.db).get(customerId, aiId);
  if (!ai) return { error: `no AI configuration ${aiId} of the customer's` };
  if (realtimeModel(ai.engine_model)) return { error: `engine_model ${ai.engine_model} is a speech-to-speech model, with no chat endpoint` };
  try {
    return llmFor(ai, deps.env, deps.egress);
  } catch (e) {
    if (e instanceof LlmError) return { error: e.message };
    throw e;
  }
}

/** The chat model of the AI configuration ai_talk ran on the call (a team's: its member then speaking). */
export async function vendorOf(deps: FactsDeps, customerId: string, callId: string): Promise<ChatLlm | { error: string }> {
  const a = await evalReachRepo(deps.db).aiOfCall(customerId, callId);
  if (!a) return { error: 'no ai_talk ran on the call, so there is no AI configuration whose LLM vendor could be asked' };
  let aiId: string | undefined = a.assistance_id;
  if (a.assistance_type === 'team') {
    const team = await teamsRepo(deps.db).get(customerId, a.assistance_id);
    aiId = team?.members.find((m) => m.id === (a.current_member_id || team.start_member_id))?.ai_id;
  }
  if (!aiId) return { error: 'the AI configuration ai_talk ran on the call no longer exists' };
  const v = await aiVendor(deps, customerId, aiId);
  return 'error' in v && v.error.startsWith('no AI configuration') ? { error: 'the AI configuration ai_talk ran on the call no longer exists' } : v;
}

export interface FactsDeps {
  db: Db;
  egress: EgressPolicy;
  env: NodeJS.ProcessEnv;
}

export async function callFacts(deps: FactsDeps, customerId: string, callId: string, played: PlayedCall, seen: { transcript: EvalTranscriptLine[]; turns: EvalTurnResult[] }): Promise<CallFacts> {
  const reach = evalReachRepo(deps.db);
  const [messages, tools, callEnd] = await Promise.all([reach.aiMessages(customerId, callId), reach.toolCalls(customerId, callId), reach.callEnd(customerId, callId)]);
  const toolCalls = toolCallsOf(tools, played.answeredAt);
  let vendor: Promise<ChatLlm | { error: string }> | null = null;
  return {
    ...seen,
    replies: repliesOf(messages, played.answeredAt),
    callerSpeech: played.callerSpeech,
    talkOvers: played.talkOvers,
    talkOversSkipped: played.talkOversSkipped,
    heard: played.heard,
    end_ms: played.end_ms,
    heardSegments: played.heardSegments ?? null,
    toolCalls,
    callEnd,
    vendor: () => (vendor ??= vendorOf(deps, customerId, callId)),
  };
}

/**
 * The goal caller's LLM for a call of the customer's: the AI configuration the scenario names
 * (`caller.llm.ai_id`), else the one ai_talk runs on the call (found by the caller's SIP Call-ID once
 * the call is up; asked when the caller's first line is due, by when the agent has started).
 */
export function callerLlm(deps: FactsDeps, customerId: string, caller: EvalCaller): (sipCallId: string) => Promise<ChatLlm | { error: string }> {
  return async (sipCallId) => {
    if (caller.llm) return aiVendor(deps, customerId, caller.llm.ai_id);
    const call = await evalReachRepo(deps.db).callBySipCallId(customerId, sipCallId);
    if (!call) return { error: 'the call is not found on the platform by its Call-ID' };
    const v = await vendorOf(deps, customerId, call.id);
    return 'error' in v ? { error: `${v.error} (a scenario can name one: caller.llm.ai_id)` } : v;
  };
}
