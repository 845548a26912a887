/**
 * The options, ends and events of a voice session (media-app/ai/voice.ts), apart so that the loop's
 * file stays small.
 */
import type { SetDucked } from './duck';
import type { EndRequest } from '../../core/ai/session';
import type { TurnSettings, VadEngine } from '../../core/ai/turns';
import type { AiRow } from '../../core/repos/ais';
import type { Speaker } from '../voices';
import type { SttFallback } from './recogniser';
import type { VoiceClock, VoiceState } from './voice-moves';

export interface VoiceOptions {
  language: string;
  /** STT provider name (default pocketsphinx) */
  sttProvider?: string;
  /** the recogniser used when the first fails (parameter.stt_fallback) */
  sttFallback?: string;
  /** the first recogniser's own key (parameter.stt_key, opened); absent: the platform's <VENDOR>_API_KEY */
  sttKey?: string;
  /** the caller's leg cancels the agent's echo (parameter.echo_cancellation; on unless false) */
  echoCancel?: boolean;
  /** restrict recognition to these phrases (pocketsphinx grammar) */
  phrases?: string[];
  ttsProvider?: string;
  voice?: string;
  /** a cloud voice (media-app/voices): spoken through it instead of endpoint.say */
  speaker?: Speaker;
  /** the voice of each AI (a team's members each speak with their own); default: the fields above */
  voiceFor?: (ai: AiRow) => AgentVoice;
  /** seconds of speech that start a caller turn (default 0.2) */
  startSecs?: number;
  /** which VAD finds the caller's turns: Silero in media-app's VAD thread (default) or fvad in the media worker */
  vadEngine?: VadEngine;
  /** end-of-turn waits and whether the greeting can be cut (core/ai/turns.ts; default TURN_DEFAULTS) */
  turns?: TurnSettings;
  /** maximum session length, ms (0: none) */
  maxDurationMs?: number;
  /** how long to wait for the recogniser's words after the caller's speech ends, ms (default 4000) */
  sttWaitMs?: number;
  /** silences the agent at the caller while the caller talks over it: the call's media state (duck.ts) */
  setDucked: SetDucked;
  /** the session's timers and now() (default: the wall clock; a virtual one in tests) */
  clock?: VoiceClock;
}

/** How one AI speaks: a cloud voice's speaker, or a local voice through endpoint.say. */
export interface AgentVoice {
  speaker?: Speaker;
  ttsProvider?: string;
  voice?: string;
}

export type VoiceEnd = EndRequest | { kind: 'duration' } | { kind: 'hangup' } | { kind: 'aborted' } | { kind: 'error'; message: string };

/** What a VoiceAgent reports (event name → listener arguments). */
export interface VoiceAgentEvents {
  /** the turn-taking state changed (voice-moves.ts), and why */
  state: [to: VoiceState, from: VoiceState, why: string];
  /** the caller started a turn (VAD) */
  turn_start: [];
  /** the caller's words over the agent's reply: it was cut */
  barge_in: [];
  /** the caller said only "mm-hm", "okay" … over the agent: it went on */
  backchannel: [text: string];
  /** the caller's turn ended */
  turn_end: [];
  /** the agent's reply started playing */
  speaking: [];
  /** something went wrong that the session survives (logged) */
  error: [err: Error];
  /** the recogniser failed and its fallback took over */
  stt_fallback: [f: SttFallback];
  /** the recogniser failed with no fallback (or the fallback failed too): the session ends with it */
  stt_error: [err: Error, sttType: string];
  /** the voice failed (no fallback, or the fallback failed too): the session ends with it */
  tts_error: [err: Error];
}
