/**
 * The checks on the transcript and the turns' latency: each a verdict and the evidence it rests on
 * (the line that matched, the turns over budget). A check that has nothing to judge fails, saying so:
 * latency_under with no measured agent turn is not a pass.
 */
import type { EvalCheck, EvalCheckResult, EvalHeardSegment, EvalTranscriptLine, EvalTurnResult } from '../../core/evals/schema';

export type TextCheck = Extract<EvalCheck, { type: 'transcript_contains' | 'transcript_not_contains' | 'latency_under' }>;

const cut = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);

function findLine(transcript: EvalTranscriptLine[], role: string, text: string): EvalTranscriptLine | undefined {
  const needle = text.toLowerCase();
  return transcript.find((l) => l.role === role && l.text.toLowerCase().includes(needle));
}

export function judgeText(check: TextCheck, transcript: EvalTranscriptLine[], turns: EvalTurnResult[]): EvalCheckResult {
  switch (check.type) {
    case 'transcript_contains': {
      const hit = findLine(transcript, check.role, check.text);
      const count = transcript.filter((l) => l.role === check.role).length;
      return {
        type: check.type,
        passed: !!hit,
        evidence: hit ? `${check.role} at ${hit.t_ms} ms: "${cut(hit.text)}"` : `"${cut(check.text)}" not in any of ${count} ${check.role} line(s)`,
      };
    }
    case 'transcript_not_contains': {
      const hit = findLine(transcript, check.role, check.text);
      return { type: check.type, passed: !hit, evidence: hit ? `${check.role} at ${hit.t_ms} ms: "${cut(hit.text)}"` : `"${cut(check.text)}" in no ${check.role} line` };
    }
    case 'latency_under': {
      if (!turns.length) return { type: check.type, passed: false, evidence: 'no agent turn was measured' };
      // a reply the caller cut off before its first audio has no latency to judge; any other without audio is over
      const over = turns.map((t, i) => ({ i, ms: t.latency_ms, cut: t.interrupted })).filter((t) => (t.ms === null ? !t.cut : t.ms >= check.ms));
      const shown = (t: { i: number; ms: number | null }) => `turn ${t.i + 1}: ${t.ms === null ? 'no audio' : `${t.ms} ms`}`;
      return {
        type: check.type,
        passed: over.length === 0,
        evidence: over.length ? `over ${check.ms} ms: ${over.map(shown).join(', ')}` : `${turns.length} turn(s), the slowest ${Math.max(...turns.map((t) => t.latency_ms ?? 0))} ms`,
      };
    }
  }
}

/** transcript_heard_contains: `text` (case-insensitive) inside what the caller's recogniser made of one stretch of the agent's audio. */
export function heardContains(text: string, heard: EvalHeardSegment[] | null): EvalCheckResult {
  const type = 'transcript_heard_contains';
  if (heard === null) return { type, passed: false, evidence: 'the caller did not transcribe what it heard (give the scenario caller.hear)' };
  const needle = text.toLowerCase();
  const hit = heard.find((s) => s.text.toLowerCase().includes(needle));
  return {
    type,
    passed: !!hit,
    evidence: hit
      ? `heard at ${hit.t_ms} ms: "${cut(hit.text)}"`
      : `"${cut(text)}" not in any of ${heard.length} heard stretch(es)${heard.length ? `: ${heard.map((s) => `"${cut(s.text, 60)}"`).join(', ')}` : ''}`,
  };
}
