/**
 * The turns of an agent the platform records none for (a ConversationRelay or Media Streams app, no
 * ai_talk on the call: docs/evals.md "Caller-side turns"), measured at the simulated caller on one
 * clock: from the end of each caller input (a say's last packet, a digit's end packets) to the start
 * of the agent's first utterance heard after it (checks/heard.ts: voiced packets, 1 s of silence
 * between utterances), if that started before the caller's next input. An input the agent did not
 * answer in that window has no turn (as ai_talk records a turn only for a reply it gave).
 */
import type { EvalTurnResult } from '../core/evals/schema';
import { utterances, type HeardPacket } from './checks/heard';

/** One caller input, ms after the answer: its first and its last packet. */
export interface CallerInput {
  t_ms: number;
  end_ms: number;
}

/**
 * Each answered caller input's turn: `latency_ms` its end to the agent's reply heard, the ai_talk
 * stages null (the caller cannot see them), `interrupted` when the caller's next input started while
 * that reply was still heard; `measured: 'caller'`, `caller_end_at` and `agent_heard_at` (ms after
 * the answer) say where it was taken.
 */
export function callerTurns(inputs: readonly CallerInput[], heard: readonly HeardPacket[]): EvalTurnResult[] {
  const said = [...inputs].sort((a, b) => a.t_ms - b.t_ms);
  const agent = utterances(heard);
  const turns: EvalTurnResult[] = [];
  for (const [i, input] of said.entries()) {
    const next = said[i + 1]?.t_ms ?? Infinity;
    // an utterance still heard when the input ended is not its reply (the agent talking through it)
    const reply = agent.find((u) => u.start > input.end_ms && u.start < next);
    if (!reply) continue;
    turns.push({
      latency_ms: Math.round(reply.start - input.end_ms),
      end_of_turn_wait_ms: null,
      stt_final_ms: null,
      llm_first_token_ms: null,
      tts_first_byte_ms: null,
      interrupted: reply.end >= next,
      measured: 'caller',
      caller_end_at: Math.round(input.end_ms),
      agent_heard_at: Math.round(reply.start),
    });
  }
  return turns;
}
