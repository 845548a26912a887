/**
 * Turn-taking rules of a voice AI (docs/ai.md "Turn-taking"): when the caller has finished (from
 * the words as well as the silence), which words over the agent's speech interrupt it, and the
 * per-AI settings that tune both (stored in the AI's `parameter`). Pure: the voice loop
 * (media-app/ai/voice.ts) applies them.
 */
import { invalidArgument } from '../errors';
import { turnWords } from './turn-words';

export interface TurnSettings {
  /** silence after a finished sentence before the agent answers, ms */
  minDelayMs: number;
  /** silence after an unfinished one ("and then, uh") before the agent answers anyway, ms */
  maxDelayMs: number;
  /** whether the caller's words may cut the agent's opening line */
  interruptibleGreeting: boolean;
  /** caller speech over the agent this long (from its onset, by the VAD) silences the agent until the words decide, ms (0: never) */
  minInterruptionMs: number;
}

/** Which VAD finds the caller's turns (`vad_config.engine`): Silero VAD v5 (default) or WebRTC's (fvad). */
export type VadEngine = 'silero' | 'webrtc';
export const VAD_ENGINES: readonly VadEngine[] = ['silero', 'webrtc'];

/** The AI's `vad_config.engine`, else Silero (it ignores hum and rumble that fvad takes for speech: docs/ai.md "Turn-taking"). */
export function vadEngine(ai: { vad_config: Record<string, unknown> }): VadEngine {
  const e = ai.vad_config?.engine;
  return e === 'webrtc' ? 'webrtc' : 'silero';
}

export const TURN_DEFAULTS: TurnSettings = { minDelayMs: 500, maxDelayMs: 2000, interruptibleGreeting: true, minInterruptionMs: 500 };
const INTERRUPTION_RANGE = { min: 0, max: 5000 };
const DELAY_RANGE = { min: 100, max: 10_000 };

/** The per-AI turn settings: `parameter.min_endpointing_delay_ms` (else `vad_config.stop_secs`), `max_…`, `interruptible_greeting`. */
export function turnSettings(ai: { parameter: Record<string, unknown>; vad_config: Record<string, unknown> }): TurnSettings {
  const p = ai.parameter ?? {};
  const stop = ai.vad_config?.stop_secs;
  const min = typeof p.min_endpointing_delay_ms === 'number' ? p.min_endpointing_delay_ms : typeof stop === 'number' && stop > 0 ? Math.round(stop * 1000) : TURN_DEFAULTS.minDelayMs;
  const max = typeof p.max_endpointing_delay_ms === 'number' ? p.max_endpointing_delay_ms : Math.max(TURN_DEFAULTS.maxDelayMs, min);
  return {
    minDelayMs: min,
    maxDelayMs: Math.max(min, max),
    interruptibleGreeting: typeof p.interruptible_greeting === 'boolean' ? p.interruptible_greeting : TURN_DEFAULTS.interruptibleGreeting,
    minInterruptionMs: typeof p.min_interruption_duration_ms === 'number' ? p.min_interruption_duration_ms : TURN_DEFAULTS.minInterruptionMs,
  };
}

/** Checks the turn settings of an AI's `parameter` (POST/PUT /ais): 400 naming the field. */
export function checkTurnParameter(p: Record<string, unknown> | undefined): void {
  if (!p) return;
  for (const k of ['min_endpointing_delay_ms', 'max_endpointing_delay_ms'] as const) {
    const v = p[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < DELAY_RANGE.min || v > DELAY_RANGE.max)) {
      throw invalidArgument(`parameter.${k} must be a whole number of ms from ${DELAY_RANGE.min} to ${DELAY_RANGE.max}`, [{ field: `parameter.${k}`, issue: 'out of range' }]);
    }
  }
  const min = p.min_endpointing_delay_ms;
  const max = p.max_endpointing_delay_ms;
  if (typeof min === 'number' && typeof max === 'number' && max < min) {
    throw invalidArgument('parameter.max_endpointing_delay_ms must not be less than parameter.min_endpointing_delay_ms', [
      { field: 'parameter.max_endpointing_delay_ms', issue: 'less than min_endpointing_delay_ms' },
    ]);
  }
  if (p.echo_cancellation !== undefined && typeof p.echo_cancellation !== 'boolean') {
    throw invalidArgument('parameter.echo_cancellation must be true or false', [{ field: 'parameter.echo_cancellation', issue: 'not a boolean' }]);
  }
  const mi = p.min_interruption_duration_ms;
  if (mi !== undefined && (typeof mi !== 'number' || !Number.isInteger(mi) || mi < INTERRUPTION_RANGE.min || mi > INTERRUPTION_RANGE.max)) {
    throw invalidArgument(`parameter.min_interruption_duration_ms must be a whole number of ms from ${INTERRUPTION_RANGE.min} (never) to ${INTERRUPTION_RANGE.max}`, [
      { field: 'parameter.min_interruption_duration_ms', issue: 'out of range' },
    ]);
  }
  if (p.interruptible_greeting !== undefined && typeof p.interruptible_greeting !== 'boolean') {
    throw invalidArgument('parameter.interruptible_greeting must be true or false', [{ field: 'parameter.interruptible_greeting', issue: 'not a boolean' }]);
  }
}

/** `text` lower-cased, without punctuation, one space between words: what two transcripts are compared by. */
export const normaliseWords = (text: string): string => words(text.replace(/-/g, ' '));

const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}' ]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * Whether `text` reads as a finished turn ('complete') or trails off ('continuation'), by the rules
 * of `language` (core/ai/turn-words.ts; without rules for it: only the punctuation).
 */
export function endOfTurn(text: string, language = 'en-US'): 'complete' | 'continuation' {
  const t = text.trim();
  if (!t || /[,\-–—…]$|\.\.\.$/.test(t)) return 'continuation';
  const rules = turnWords(language);
  const all = words(t).split(' ');
  const last = all.at(-1) ?? '';
  if (/[.!?]$/.test(t)) return rules?.fillers.includes(last) ? 'continuation' : 'complete';
  return rules?.continuations.has(last) ? 'continuation' : 'complete';
}

/** The silence to wait after `text` before answering: short after a finished sentence, long after a trailing word. */
export function endpointingDelay(text: string, s: TurnSettings, language = 'en-US'): { rule: 'complete' | 'continuation'; delayMs: number } {
  const rule = endOfTurn(text, language);
  return { rule, delayMs: rule === 'complete' ? s.minDelayMs : s.maxDelayMs };
}

/**
 * What the caller's words over the agent's speech mean: 'stop' (a stop word anywhere), 'backchannel'
 * (nothing but acknowledgements: the agent keeps speaking), else 'words' (a real interruption). In a
 * language without word rules every word is 'words'.
 */
export function interruptionOf(text: string, language = 'en-US'): 'stop' | 'backchannel' | 'words' | 'none' {
  const w = words(text.replace(/-/g, ' '));
  if (!w) return 'none';
  const rules = turnWords(language);
  if (!rules) return 'words';
  const padded = ` ${w} `;
  if (rules.stops.some((s) => padded.includes(` ${s} `))) return 'stop';
  // a run of backchannels ("okay yeah", "mm hm right") is still one
  let rest = w;
  for (;;) {
    const b = rules.backchannels.find((x) => rest === x || rest.startsWith(`${x} `));
    if (!b) break;
    rest = rest.slice(b.length).trim();
    if (!rest) return 'backchannel';
  }
  return 'words';
}
