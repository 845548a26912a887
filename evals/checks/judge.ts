/**
 * The LLM judge: the call's transcript and the scenario's rubric go to the customer's LLM vendor (the
 * one ai_talk used for the AI configuration on the call, through the egress policy, call-facts.ts),
 * which must answer with a JSON verdict {passed, reason}. The reason is the evidence. Anything else
 * (no vendor, a failed request, an answer that is not such a verdict) fails the check and says why:
 * a judge that could not judge never passes.
 */
import { z } from 'zod';
import type { EvalCheckResult, EvalTranscriptLine } from '../../core/evals/schema';
import { jsonInAnswer } from '../../core/llm/json-answer';
import type { CallFacts } from './facts';
import { deadline } from '../deadline';

export const JUDGE_PROMPT =
  'You judge a phone call between a caller and a voice agent against a rubric. ' + 'Answer with JSON only: {"passed": true or false, "reason": "one or two sentences saying why"}.';

const verdict = z.object({ passed: z.boolean(), reason: z.string().trim().min(1) });

const cut = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function judgeRequest(rubric: string, transcript: EvalTranscriptLine[]): string {
  const lines = transcript.map((l) => `[${l.t_ms} ms] ${l.role}: ${l.text}`).join('\n');
  return `Rubric: ${rubric}\n\nTranscript (ms after the call was answered):\n${lines || '(nobody said anything)'}`;
}

/** The verdict in the judge's answer, or what is wrong with it. */
export function parseVerdict(answer: string): { passed: boolean; reason: string } | { error: string } {
  const found = jsonInAnswer(answer, 'verdict');
  if ('error' in found) return found;
  const v = verdict.safeParse(found.value);
  if (!v.success) return { error: `the verdict is not {passed: boolean, reason: non-empty string} (${v.error.issues.map((i) => i.path.join('.') || 'the answer').join(', ')})` };
  return v.data;
}

export async function judgeCall(rubric: string, f: CallFacts, o: { timeoutMs: number; signal: AbortSignal }): Promise<EvalCheckResult> {
  const type = 'judge';
  const llm = await f.vendor();
  if ('error' in llm) return { type, passed: false, evidence: `the judge could not be asked: ${llm.error}` };
  let content: string;
  // the request's own deadline and the run's signal, both let go of when the request settles
  const d = deadline(o.signal, o.timeoutMs, 'the answer');
  try {
    ({ content } = await llm.complete({
      messages: [
        { role: 'system', content: JUDGE_PROMPT },
        { role: 'user', content: judgeRequest(rubric, f.transcript) },
      ],
      temperature: 0,
      signal: d.signal,
    }));
  } catch (e) {
    const why = o.signal.aborted ? 'the run was stopped' : d.signal.aborted ? (d.signal.reason as Error).message : (e as Error).message;
    return { type, passed: false, evidence: `the judge (${llm.label}) failed: ${why}` };
  } finally {
    d.end();
  }
  const v = parseVerdict(content);
  if ('error' in v) return { type, passed: false, evidence: `the judge's answer is no verdict: ${v.error}; it said "${cut(content.trim())}"` };
  return { type, passed: v.passed, evidence: v.reason };
}
