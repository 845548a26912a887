/**
 * A call's checks, in the scenario's order, each a verdict with the evidence it rests on; a check
 * with nothing to judge fails, saying so. Each kind is judged where what it reads is owned:
 * checks/text.ts (transcript, latency, what the caller's recogniser heard), checks/audio.ts (barge-in, self-interruption, on the heard
 * audio), checks/records.ts (tool calls, who hung up, transfers), checks/judge.ts (the LLM judge).
 */
import type { EvalCheck, EvalCheckResult } from '../core/evals/schema';
import { bargeInWithin, noSelfInterruption } from './checks/audio';
import type { CallFacts } from './checks/facts';
import { judgeCall } from './checks/judge';
import { endedBy, toolCalled, transferred } from './checks/records';
import { heardContains, judgeText } from './checks/text';

export type { CallFacts } from './checks/facts';

export async function judgeCheck(check: EvalCheck, f: CallFacts, o: { judgeTimeoutMs: number; signal: AbortSignal }): Promise<EvalCheckResult> {
  switch (check.type) {
    case 'transcript_contains':
    case 'transcript_not_contains':
    case 'latency_under':
      return judgeText(check, f.transcript, f.turns);
    case 'transcript_heard_contains':
      return heardContains(check.text, f.heardSegments);
    case 'barge_in_within':
      return bargeInWithin(check.ms, f);
    case 'no_self_interruption':
      return noSelfInterruption(f);
    case 'tool_called':
      return toolCalled(check.name, check.arguments, f);
    case 'ended_by':
      return endedBy(check.by, f);
    case 'transferred':
      return transferred(f);
    case 'judge':
      return judgeCall(check.rubric, f, { timeoutMs: o.judgeTimeoutMs, signal: o.signal });
  }
}

/** Every check of the scenario, one after another (a judge asks its vendor once per check). */
export async function judgeChecks(checks: EvalCheck[], f: CallFacts, o: { judgeTimeoutMs: number; signal: AbortSignal }): Promise<EvalCheckResult[]> {
  const out: EvalCheckResult[] = [];
  for (const c of checks) out.push(await judgeCheck(c, f, o));
  return out;
}
