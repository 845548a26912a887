/**
 * The agent's audio as the simulated caller heard it (RtpPhone.heard, timed from the answer): which
 * packets are voiced, where an utterance starts, and when the agent fell silent after the caller
 * started talking over it. Pure functions, shared by the talk-over turn (call.ts) and the audio
 * checks (audio.ts), so both read "the agent is talking" the same way (docs/evals.md).
 */

/** One packet of the platform's audio: ms after the answer when it arrived, the mean absolute level of its decoded samples. */
export interface HeardPacket {
  t_ms: number;
  level: number;
}

/** Above this mean absolute level (16-bit samples, µ-law decoded) a 20 ms packet is the agent's voice; below, silence or line noise. */
export const VOICED_LEVEL = 300;
/** Agent audio separated by less silence than this is one utterance (longer than a voice's pauses between sentences). */
export const UTTERANCE_GAP_MS = 1000;

const voiced = (p: HeardPacket) => p.level > VOICED_LEVEL;

/** The start and end (last voiced packet) of each utterance of the agent's, in order. */
export function utterances(heard: readonly HeardPacket[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const p of heard) {
    if (!voiced(p)) continue;
    const last = out.at(-1);
    if (last && p.t_ms - last.end < UTTERANCE_GAP_MS) last.end = p.t_ms;
    else out.push({ start: p.t_ms, end: p.t_ms });
  }
  return out;
}

/** The last voiced packet at or before `at`, by index, or -1. */
function lastVoicedAt(heard: readonly HeardPacket[], at: number): number {
  let i = heard.length - 1;
  while (i >= 0 && (heard[i]!.t_ms > at || !voiced(heard[i]!))) i--;
  return i;
}

/** When the agent utterance being heard at `at` started (its last voiced packet less than UTTERANCE_GAP_MS before `at`), or null: the agent is silent. */
export function utteranceAt(heard: readonly HeardPacket[], at: number): number | null {
  const i = lastVoicedAt(heard, at);
  if (i < 0 || at - heard[i]!.t_ms >= UTTERANCE_GAP_MS) return null;
  let start = heard[i]!.t_ms;
  for (let j = i - 1; j >= 0; j--) {
    if (!voiced(heard[j]!)) continue;
    if (start - heard[j]!.t_ms >= UTTERANCE_GAP_MS) break;
    start = heard[j]!.t_ms;
  }
  return start;
}

export type Cut =
  /** the agent was not heard when the caller started */
  | { talking: false }
  /** the agent's last voiced packet before a silence of UTTERANCE_GAP_MS (or the call's end): `ms` after the caller started; heard again at `resumedAt` while the caller still spoke */
  | { talking: true; since: number; ms: number; resumedAt: number | null };

/**
 * What the caller heard of the agent after it started talking over it at `from` (its speech lasting
 * to `to`): the agent's utterance went on until its last voiced packet before a silence of
 * UTTERANCE_GAP_MS, or before the heard audio ends (the call ended).
 */
export function cutAfter(heard: readonly HeardPacket[], from: number, to: number): Cut {
  const since = utteranceAt(heard, from);
  if (since === null) return { talking: false };
  let last = heard[lastVoicedAt(heard, from)]!.t_ms;
  let next: HeardPacket | undefined;
  for (const p of heard) {
    if (p.t_ms <= from || !voiced(p)) continue;
    if (p.t_ms - last >= UTTERANCE_GAP_MS) {
      next = p;
      break;
    }
    last = p.t_ms;
  }
  return { talking: true, since, ms: Math.max(0, Math.round(last - from)), resumedAt: next && next.t_ms < to ? next.t_ms : null };
}
