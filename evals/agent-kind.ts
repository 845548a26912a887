/**
 * An agent outside the platform (a ConversationRelay app, a Media Streams app: docs/evals.md "Agent
 * kinds"): the platform runs no ai_talk on the call, so it records no turns' latency stages, and the
 * agent's text only for a ConversationRelay app (the replies it sent, relay_lines), on which the checks
 * on the agent's side of the transcript are then judged. Without that text they fail, never pass for want of anything to judge (transcript_not_contains
 * included), and their evidence says why and what judges such an agent. Its tool calls the platform
 * never sees: tool_called fails saying so (NO_TOOL_CALLS), not that no tool ran. Its turns are measured
 * at the caller (caller-turns.ts), and latency_under's evidence says so.
 */
import type { EvalCheck, EvalCheckResult } from '../core/evals/schema';
import { RELAY_LINE_MAX_CHARS, RELAY_LINES_MAX, type RelayLineLoss } from '../core/repos/relay-lines';

export const NO_AI_TALK =
  'no ai_talk ran on the call: the platform records no text of an agent outside it (a Media Streams app; a ConversationRelay app that sent none); judge it by what the caller heard (caller.hear, transcript_heard_contains, barge_in_within)';

/** tool_called on such a call: the app's tools run where the platform cannot see them, so "no tool was called" alone would say they did not run. */
export const NO_TOOL_CALLS =
  'no ai_talk ran on the call: the platform records no tool calls of an agent outside it (a Media Streams or ConversationRelay app runs its tools itself); judge what they did by what the caller heard';

export const CALLER_SIDE = "no ai_talk ran on the call: each turn measured at the caller, from the end of its input to the agent's first heard audio";

/** Whether a check reads what only ai_talk records. */
const needsAiTalk = (c: EvalCheck): boolean => (c.type === 'transcript_contains' || c.type === 'transcript_not_contains') && c.role === 'agent';

export const RELAY_TEXT = "no ai_talk ran on the call: the agent's lines are the ConversationRelay app's replies as it sent them, not what the caller heard";

/** Why a check cannot vouch for words missing from an agent transcript the relay did not keep whole. */
export const incompleteRelay = (loss: RelayLineLoss): string =>
  `the agent's transcript is incomplete: ${loss.replies} replies and ${loss.chars} characters not recorded (the relay keeps ${RELAY_LINES_MAX} replies a call, ${RELAY_LINE_MAX_CHARS} characters a reply)`;

/** A relayed check's verdict: transcript_not_contains cannot pass on a transcript that misses some of what the app said (`loss`). */
function relayed(check: EvalCheck, r: EvalCheckResult, loss: RelayLineLoss | null): EvalCheckResult {
  if (loss && check.type === 'transcript_not_contains' && r.passed) return { type: r.type, passed: false, evidence: `${r.evidence}, but ${incompleteRelay(loss)} (${RELAY_TEXT})` };
  return { ...r, evidence: `${r.evidence} (${RELAY_TEXT})` };
}

/**
 * The verdicts of a call on which no ai_talk ran: those that need its records fail, saying so, unless a
 * ConversationRelay app's replies were recorded (`relay.lines`), which they are then judged on, saying so
 * (transcript_not_contains failing when some of them were not kept, `relay.loss`); tool_called fails
 * saying the platform records no app's tool calls; latency_under says where its turns were measured.
 */
export function withoutAiTalk(checks: EvalCheck[], results: EvalCheckResult[], relay: { lines: number; loss: RelayLineLoss | null }): EvalCheckResult[] {
  const relayText = relay.lines > 0 || relay.loss !== null;
  return results.map((r, i) => {
    if (checks[i]!.type === 'tool_called') return { type: r.type, passed: false, evidence: `${r.evidence} (${NO_TOOL_CALLS})` };
    if (needsAiTalk(checks[i]!)) return relayText ? relayed(checks[i]!, r, relay.loss) : { type: r.type, passed: false, evidence: `${r.evidence} (${NO_AI_TALK})` };
    if (checks[i]!.type === 'latency_under') return { ...r, evidence: `${r.evidence} (${CALLER_SIDE})` };
    return r;
  });
}
