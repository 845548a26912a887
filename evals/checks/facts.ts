/**
 * What a call's checks are judged on: the transcript and turns (observe.ts), what the simulated
 * caller said and heard (call.ts), and what the platform recorded of the call beyond the
 * transcript (records.ts): each reply's record time, the tool calls, who hung up, what it was
 * connected or transferred to, and the customer's LLM vendor for the judge.
 */
import type { EvalHeardSegment, EvalToolCall, EvalTranscriptLine, EvalTurnResult } from '../../core/evals/schema';
import type { ChatLlm } from '../../core/llm/client';
import type { ReachedCallEnd } from '../../core/repos/eval-reach';
import type { TalkOver } from '../call';
import type { HeardPacket } from './heard';

export interface CallFacts {
  transcript: EvalTranscriptLine[];
  turns: EvalTurnResult[];
  /** each agent reply (one per latency record, as turns): when ai_talk recorded it (ms after the answer) and whether it was cut */
  replies: { t_ms: number; interrupted: boolean }[];
  callerSpeech: { t_ms: number; end_ms: number }[];
  talkOvers: TalkOver[];
  talkOversSkipped: number;
  heard: HeardPacket[];
  /** when the call ended, ms after the answer */
  end_ms: number;
  /** what the caller's recogniser made of the agent's audio; null: the caller did not transcribe (no caller.hear, no goal) */
  heardSegments: EvalHeardSegment[] | null;
  /** the assistant messages' tool calls, arguments parsed (a string when they are not JSON), each with its recorded result: the result's `tool_calls` */
  toolCalls: EvalToolCall[];
  /** the call's record: who hung up, what it was connected or transferred to */
  callEnd: ReachedCallEnd | null;
  /** the customer's LLM vendor as ai_talk used it for this call, or why there is none */
  vendor: () => Promise<ChatLlm | { error: string }>;
}
