/**
 * A call's two sides on one clock (ms after the answer), as the simulated caller had them: its own
 * speech and digits (from their first to their last packet) and the agent's audio as heard (voiced
 * packets, checks/heard.ts). From them the result's `interruptions` (who talked over whom, and whether
 * the agent stopped: the same measure as barge_in_within, cutAfter) and `silences` (dead air on both
 * sides longer than EVAL_SILENCE_MS). Pure functions (docs/evals.md "What is measured, and how").
 */
import { EVAL_SILENCE_MS, type EvalInterruption, type EvalSilence } from '../core/evals/schema';
import { cutAfter, utterances, VOICED_LEVEL, type HeardPacket } from './checks/heard';

/** One caller input: its first and its last packet, ms after the answer. */
export interface Span {
  t_ms: number;
  end_ms: number;
}

/** A voiced packet of the agent's is heard for its 20 ms from its arrival. */
export const PACKET_MS = 20;

/** The agent heard at `from` (within the caller's speech `s`): how long it went on, and whether it gave way; null when it was not heard. */
function overlap(heard: readonly HeardPacket[], from: number, s: Span): Omit<EvalInterruption, 'by'> | null {
  const cut = cutAfter(heard, from, s.end_ms);
  if (!cut.talking) return null;
  return {
    t_ms: Math.round(from),
    agent_from_ms: Math.round(cut.since),
    caller_end_ms: Math.round(s.end_ms),
    agent_stopped_after_ms: cut.ms,
    agent_stopped: from + cut.ms < s.end_ms && cut.resumedAt === null,
    agent_resumed_ms: cut.resumedAt === null ? null : Math.round(cut.resumedAt),
  };
}

/**
 * Each overlap of the caller's speech and the agent's audio: the caller starting while the agent's
 * utterance was heard (`by: caller`, a barge-in: honoured when the agent fell silent before the caller
 * finished and stayed so while it spoke), and an agent utterance starting while the caller spoke
 * (`by: agent`). In order of t_ms.
 */
export function interruptionsOf(speech: readonly Span[], heard: readonly HeardPacket[]): EvalInterruption[] {
  const agent = utterances(heard);
  const out: EvalInterruption[] = [];
  for (const s of speech) {
    const over = overlap(heard, s.t_ms, s);
    if (over) out.push({ by: 'caller', ...over });
    for (const u of agent) {
      if (u.start <= s.t_ms || u.start >= s.end_ms) continue;
      const o = overlap(heard, u.start, s);
      if (o) out.push({ by: 'agent', ...o });
    }
  }
  return out.sort((a, b) => a.t_ms - b.t_ms);
}

/**
 * Each gap longer than `minMs` (exactly `minMs` is not one) in which neither side was heard: no caller
 * speech or digits, no voiced agent packet; from the answer to the call's end `endMs`. Each says what
 * came before it (the answer, or the side heard last) and what ended it (the side heard next, or the end).
 */
export function silencesOf(caller: readonly Span[], heard: readonly HeardPacket[], endMs: number, minMs = EVAL_SILENCE_MS): EvalSilence[] {
  const marks = [
    ...caller.map((s) => ({ from: s.t_ms, to: s.end_ms, side: 'caller' as const })),
    ...heard.filter((p) => p.level > VOICED_LEVEL).map((p) => ({ from: p.t_ms, to: p.t_ms + PACKET_MS, side: 'agent' as const })),
  ].sort((a, b) => a.from - b.from);
  const out: EvalSilence[] = [];
  let until = 0;
  let after: EvalSilence['after'] = 'answer';
  const gap = (to: number, before: EvalSilence['before']) => {
    if (to - until > minMs) out.push({ t_ms: Math.round(until), duration_ms: Math.round(to - until), after, before });
  };
  for (const m of marks) {
    gap(m.from, m.side);
    if (m.to >= until) {
      until = m.to;
      after = m.side;
    }
  }
  gap(endMs, 'end');
  return out;
}
