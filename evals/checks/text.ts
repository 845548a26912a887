/**
 * The checks on the transcript and the turns' latency: each a verdict and the evidence it rests on
 * (the line that matched, the turns over budget). A check that has nothing to judge fails, saying so:
 * latency_under with no measured agent turn is not a pass.
 */
import type { EvalCheck, EvalCheckResult, EvalTranscriptLine, EvalTurnResult } from '../../core/evals/schema';

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
