/**
 * The goal caller (docs/evals.md "A goal caller"): instead of a script, an LLM plays the caller turn by
 * turn. Each turn: wait until the agent has spoken and fallen silent (`replySilenceMs` after its last
 * voiced packet; nothing heard within `agentWaitMs` counts as silence), transcribe what was heard
 * (hearing.ts, the platform's recogniser), ask the caller's LLM (the customer's vendor: an AI
 * configuration's, through the egress policy) for the next line, say it with espeak-ng. The LLM ends
 * the call by calling its tool `goal_reached` (chosen over a text marker: a tool call cannot be said by
 * mistake, nor appear in a line by accident); after `max_turns` lines of its own the caller hears the
 * agent's answer and hangs up. An LLM that fails, refuses or answers nothing, or a recogniser that
 * fails, stops the call (hung up) with an error saying which: never a silent pass.
 */
import type { EvalCaller, EvalTranscriptLine } from '../core/evals/schema';
import type { ChatLlm, ChatMessage, ToolDef } from '../core/llm/client';
import type { RtpPhone } from './rtp-phone';
import type { Hearing } from './hearing';
import { VOICED_LEVEL } from './checks/heard';
import { deadline } from './deadline';
import { speak } from './speech';

export const GOAL_CALLER_PROMPT =
  'You are the caller on a phone call with a voice agent; you are not an assistant. ' +
  'Each user message is what you heard the agent say (a speech recogniser transcribed it, so words may be wrong). ' +
  'Answer with the one short thing you say next, as plain spoken words. ' +
  'When your goal is reached, or clearly cannot be, call the tool goal_reached instead (with what you say to end the call, if anything, as your text).';

export const GOAL_TOOL: ToolDef = {
  type: 'function',
  function: {
    name: 'goal_reached',
    description: 'End the call: the goal is reached (reached true) or cannot be (reached false).',
    parameters: { type: 'object', properties: { reached: { type: 'boolean' }, reason: { type: 'string' } }, required: ['reached', 'reason'] },
  },
};

export const DEFAULT_MAX_TURNS = 8;
/** what the caller's LLM is told when it heard nothing */
export const HEARD_NOTHING = '(the agent said nothing)';

export interface GoalOutcome {
  reached: boolean;
  turns: number;
  reason: string;
}

export class GoalCallerError extends Error {}

export interface GoalCall {
  caller: EvalCaller;
  phone: RtpPhone;
  hearing: Hearing;
  /** performance.now() of the answer */
  t0: number;
  /** ms after the answer */
  now: () => number;
  /** settles when the call is over (the agent hung up, the cap, the run aborted) */
  stop: Promise<unknown>;
  signal: AbortSignal;
  llm: () => Promise<ChatLlm | { error: string }>;
  timeoutMs: number;
  agentWaitMs: number;
  replySilenceMs: number;
  /** a line the caller said: its text and when its first and last packets went out (ms after the answer) */
  said: (line: EvalTranscriptLine, end_ms: number) => void;
}

/** Until the agent spoke and fell silent for `silenceMs` ({from, to}), nothing voiced within `waitMs` ('silent'), or the call is over. */
function agentTurn(g: GoalCall): Promise<{ from: number; to: number } | 'silent' | 'over'> {
  const from = g.now();
  let quiet: NodeJS.Timeout | undefined;
  let idle: NodeJS.Timeout | undefined;
  let off: () => void = () => undefined;
  return new Promise<{ from: number; to: number } | 'silent' | 'over'>((resolve) => {
    idle = setTimeout(() => resolve('silent'), g.agentWaitMs);
    void g.stop.then(() => resolve('over'));
    off = g.phone.onHeard(({ pcm }) => {
      let sum = 0;
      for (const s of pcm) sum += Math.abs(s);
      if (!pcm.length || sum / pcm.length <= VOICED_LEVEL) return;
      clearTimeout(idle);
      clearTimeout(quiet);
      quiet = setTimeout(() => resolve({ from, to: g.now() }), g.replySilenceMs);
    });
  }).finally(() => {
    off();
    clearTimeout(quiet);
    clearTimeout(idle);
  });
}

/**
 * The outcome a goal_reached call's arguments say: reached only when `reached` is true (missing, not a
 * boolean, arguments that are not JSON: not reached); arguments that are not JSON end the call all the
 * same, the reason saying so with their first 100 characters.
 */
export function goalEnd(argumentsText: string): { reached: boolean; reason: string } {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText || '{}');
  } catch {
    return { reached: false, reason: `the caller LLM's goal_reached arguments were not JSON: ${argumentsText.slice(0, 100)}` };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { reached: false, reason: `the caller LLM's goal_reached arguments were not a JSON object: ${argumentsText.slice(0, 100)}` };
  }
  const { reached, reason } = args as { reached?: unknown; reason?: unknown };
  return { reached: reached === true, reason: typeof reason === 'string' && reason ? reason : 'the caller LLM ended the call (no reason given)' };
}

/** The caller LLM's next move: a line to say, and whether it ends the call with it. */
async function nextMove(g: GoalCall, llm: ChatLlm, messages: ChatMessage[]): Promise<{ text: string; end: { reached: boolean; reason: string } | null }> {
  const d = deadline(g.signal, g.timeoutMs, "the caller LLM's answer");
  let answer: Awaited<ReturnType<ChatLlm['complete']>>;
  try {
    answer = await llm.complete({ messages, tools: [GOAL_TOOL], signal: d.signal });
  } catch (e) {
    const why = g.signal.aborted ? 'the run was stopped' : d.signal.aborted ? (d.signal.reason as Error).message : (e as Error).message;
    throw new GoalCallerError(`the goal caller's LLM (${llm.label}) failed: ${why}`);
  } finally {
    d.end();
  }
  const text = answer.content.trim();
  const call = answer.tool_calls.find((c) => c.function.name === GOAL_TOOL.function.name);
  if (call) return { text, end: goalEnd(call.function.arguments) };
  if (!text) throw new GoalCallerError(`the goal caller's LLM (${llm.label}) answered nothing to say and did not end the call`);
  return { text, end: null };
}

async function say(g: GoalCall, text: string): Promise<boolean> {
  const samples = await speak(text, g.caller.language, { memo: false, ...(g.caller.voice ? { variant: g.caller.voice } : {}) }); // an LLM's line: said once
  const said = g.phone.say(samples);
  await Promise.race([said, g.stop]);
  const at = await Promise.race([said, Promise.resolve(null)]);
  if (at === null) return false;
  g.said({ role: 'caller', text, t_ms: Math.round(at - g.t0) }, Math.round(g.now()));
  return true;
}

/** The agent's turn transcribed; a recogniser that fails stops the caller as its LLM failing would. */
async function hear(g: GoalCall, heard: { from: number; to: number }) {
  try {
    return await g.hearing.transcribe(heard.from, heard.to + 1, g.signal);
  } catch (e) {
    throw new GoalCallerError((e as Error).message);
  }
}

/** Plays the goal caller until its LLM ends the call, max_turns lines were said, or the call is over; a failing LLM throws GoalCallerError. */
export async function playGoal(g: GoalCall): Promise<GoalOutcome> {
  const max = g.caller.max_turns ?? DEFAULT_MAX_TURNS;
  const persona = g.caller.persona ? `\nWho you are: ${g.caller.persona}` : '';
  const messages: ChatMessage[] = [{ role: 'system', content: `${GOAL_CALLER_PROMPT}${persona}\nYour goal: ${g.caller.goal ?? ''}` }];
  let turns = 0;
  let llm: ChatLlm | null = null;
  for (;;) {
    const heard = await agentTurn(g);
    if (heard === 'over') return { reached: false, turns, reason: 'the call ended before the goal was reached' };
    const segment = heard === 'silent' ? null : await hear(g, heard);
    if (turns >= max) return { reached: false, turns, reason: `${max} line(s) said (max_turns) without the goal reached` };
    if (!llm) {
      const found = await g.llm();
      if ('error' in found) throw new GoalCallerError(`the goal caller has no LLM: ${found.error}`);
      llm = found;
    }
    messages.push({ role: 'user', content: segment?.text || HEARD_NOTHING });
    const move = await nextMove(g, llm, messages);
    if (move.text) {
      if (!(await say(g, move.text))) return { reached: false, turns, reason: 'the call ended before the goal was reached' };
      turns++;
      messages.push({ role: 'assistant', content: move.text });
    }
    if (move.end) return { ...move.end, turns };
  }
}
