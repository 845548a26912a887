/**
 * An agent outside the platform (a ConversationRelay app, a Media Streams app: docs/evals.md "Agent
 * kinds"): the platform runs no ai_talk on the call, so it records neither the agent's text nor its
 * turns' latency stages; only what the caller heard of it is known. The checks on the agent's side of
 * the transcript then fail, never pass for want of anything to judge (transcript_not_contains
 * included), and their evidence says why and what judges such an agent. Its turns are measured at the
 * caller (caller-turns.ts), and latency_under's evidence says so.
 */
import type { EvalCheck, EvalCheckResult } from '../core/evals/schema';

export const NO_AI_TALK =
  'no ai_talk ran on the call: the platform records no text of an agent outside it (a ConversationRelay or Media Streams app); judge it by what the caller heard (caller.hear, transcript_heard_contains, barge_in_within)';

export const CALLER_SIDE = "no ai_talk ran on the call: each turn measured at the caller, from the end of its input to the agent's first heard audio";

/** Whether a check reads what only ai_talk records. */
const needsAiTalk = (c: EvalCheck): boolean => (c.type === 'transcript_contains' || c.type === 'transcript_not_contains') && c.role === 'agent';

/** The verdicts of a call on which no ai_talk ran: those that need its records fail, saying so; latency_under says where its turns were measured. */
export function withoutAiTalk(checks: EvalCheck[], results: EvalCheckResult[]): EvalCheckResult[] {
  return results.map((r, i) => {
    if (needsAiTalk(checks[i]!)) return { type: r.type, passed: false, evidence: `${r.evidence} (${NO_AI_TALK})` };
    if (checks[i]!.type === 'latency_under') return { ...r, evidence: `${r.evidence} (${CALLER_SIDE})` };
    return r;
  });
}
