/**
 * The checks on what the caller heard of the agent (docs/evals.md "What is measured"):
 * barge_in_within (after each talk-over starts, the agent's audio stops within `ms`, read from the
 * heard packets' times and levels, heard.ts) and no_self_interruption (ai_talk never cut its own
 * reply: every reply it recorded as cut had caller speech that could have cut it).
 */
import type { EvalCheckResult } from '../../core/evals/schema';
import type { CallFacts } from './facts';
import { cutAfter, UTTERANCE_GAP_MS } from './heard';

export function bargeInWithin(ms: number, f: CallFacts): EvalCheckResult {
  const type = 'barge_in_within';
  if (!f.talkOvers.length) {
    const skipped = f.talkOversSkipped ? ` (${f.talkOversSkipped} talk-over turn(s) skipped: the agent was not heard)` : '';
    return { type, passed: false, evidence: `the caller never talked over the agent${skipped}` };
  }
  const parts: string[] = [];
  let passed = true;
  for (const o of f.talkOvers) {
    const cut = cutAfter(f.heard, o.t_ms, o.end_ms);
    if (!cut.talking) {
      passed = false;
      parts.push(`talk-over at ${o.t_ms} ms: the agent was no longer heard (nothing to cut)`);
      continue;
    }
    const ok = cut.ms <= ms && cut.resumedAt === null;
    passed &&= ok;
    const resumed = cut.resumedAt === null ? '' : `, then was heard again at ${Math.round(cut.resumedAt)} ms while the caller still spoke`;
    parts.push(`talk-over at ${o.t_ms} ms (the agent talking since ${Math.round(cut.since)} ms): the agent stopped ${cut.ms} ms later${resumed}`);
  }
  return { type, passed, evidence: parts.join('; ') };
}

/**
 * A reply ai_talk recorded as cut (`interrupted`) while the caller said nothing that could have cut
 * it: no caller speech overlaps the span from the previous reply's record (the answer, for the first)
 * to the next reply's record (the call's end, for the last). ai_talk starts a new reply only after
 * cutting the one playing, so a new utterance over the previous one shows as such a cut.
 */
export function noSelfInterruption(f: CallFacts): EvalCheckResult {
  const type = 'no_self_interruption';
  const r = f.replies;
  if (!r.length) return { type, passed: false, evidence: 'no agent reply was recorded' };
  const own: number[] = [];
  r.forEach((reply, i) => {
    if (!reply.interrupted) return;
    const lo = i > 0 ? r[i - 1]!.t_ms : 0;
    const hi = i + 1 < r.length ? r[i + 1]!.t_ms : f.end_ms + UTTERANCE_GAP_MS;
    if (!f.callerSpeech.some((s) => s.t_ms < hi && s.end_ms > lo)) own.push(i);
  });
  const cut = r.filter((x) => x.interrupted).length;
  if (own.length) {
    return {
      type,
      passed: false,
      evidence: own
        .map((i) => `reply ${i + 1} (recorded at ${r[i]!.t_ms} ms) was cut with no caller speech between ${i > 0 ? r[i - 1]!.t_ms : 0} ms and ${i + 1 < r.length ? `${r[i + 1]!.t_ms} ms` : 'the end'}`)
        .join('; '),
    };
  }
  return { type, passed: true, evidence: `${r.length} reply(ies), ${cut} cut, each while the caller spoke` };
}
