/**
 * The seam between the speech-to-speech host (media-app/ai/realtime.ts: forks, injection, barge-in
 * at what was played, tools, aimessages, hand-off, errors) and one model's wire protocol (one file
 * each: openai.ts, gemini.ts, deepgram.ts). A link only speaks its vendor's protocol; it never
 * touches the call's media or the AI session.
 */
import type { ToolDef } from '../../../core/llm/client';
import type { EgressPolicy } from '../../../core/net';

/** PCM rates between the host and a link: the call's narrowband rate or a wideband leg's. */
export type LinkRate = 8000 | 16000;

/** What the model is told: the AI's prompt with its variables, and the platform's tools. */
export interface LinkSetup {
  instructions: string;
  tools: ToolDef[];
}

/** A function call of the model, with the vendor's id for its answer. */
export interface LinkToolCall {
  callId: string;
  name: string;
  /** JSON text */
  args: string;
}

export interface LinkToolResult extends LinkToolCall {
  output: string;
}

/** What a link reports to the host, in the order its vendor's events came. */
export interface LinkHost {
  /** the model's audio of its response `item`, 16-bit PCM at `rate` */
  audio(item: string, pcm: Int16Array, rate: LinkRate): void;
  /** the vendor heard the caller start speaking (its own VAD): the model's audio is to be cut */
  callerSpeaking(): void;
  /**
   * the vendor ended the caller's turn: its speech ended `atMs` into the caller's audio sent on this
   * link (for the turn's latency; a link whose vendor does not say reports nothing)
   */
  callerStopped(atMs: number): void;
  /**
   * the vendor's events place the end of the caller's speech at `speechEndAt` (wall clock, ms) and say
   * its turn is over, without saying when its end-of-turn detection decided (Gemini, Deepgram)
   */
  callerSpeechEnded(speechEndAt: number): void;
  /** the caller's words (a whole utterance) */
  heard(text: string): void;
  /**
   * the model's words (a whole response), and the item whose audio they are where the vendor says;
   * `unplayed`: the session is ending before (all of) their audio played (ModelLink.drain): they are recorded cut
   */
  said(text: string, item?: string, unplayed?: boolean): void;
  toolCalls(calls: LinkToolCall[]): void;
  /** the session cannot go on (refused key, the vendor closed the connection) */
  fail(message: string): void;
  /** something went wrong that does not end the session */
  warn(err: Error): void;
}

/** The settings every link takes (each vendor file adds its own). */
export interface LinkOptions {
  /** the vendor's model (engine_model after the target's dot) */
  model: string;
  baseUrl: string;
  apiKey: string;
  /** the model's voice ('' = its default) */
  voice: string;
  /** BCP-47; the caller's language */
  language: string;
  egress: EgressPolicy;
  /** extra CAs trusted for the WebSocket */
  ca?: Buffer | null;
  /** silence that ends a caller turn, ms (where the vendor's VAD takes it) */
  silenceMs?: number;
  /** the AI's greeting text (parameter.greeting), where the vendor speaks a fixed greeting */
  greeting?: string;
}

export interface ModelLink {
  /** the name in errors: `gemini-live: the API key was refused` */
  readonly vendor: string;
  /** caller audio at the leg's rate (16 kHz on a wideband leg) rather than always 8 kHz */
  readonly legRate: boolean;
  /**
   * Connects through the egress policy and configures the session for caller audio at `rate`.
   * Throws a clear Error (refused URL, refused key, unreachable vendor, cancelled).
   */
  connect(rate: LinkRate, setup: LinkSetup, host: LinkHost, signal: AbortSignal): Promise<void>;
  /** caller audio, 40 ms at the rate given to connect */
  sendAudio(pcm: Int16Array): void;
  /** the model speaks first */
  greet(): void;
  /** the caller cut `item` after `playedMs` of it had been played (vendors without such a message: nothing) */
  truncate(item: string, playedMs: number): void;
  /**
   * The tools' results. `next`: null when a tool ended the conversation (nothing more is asked of
   * the model), else the setup to go on with (a team hand-off's new member, or the same).
   */
  toolResults(results: LinkToolResult[], next: { setup: LinkSetup; handoff: boolean } | null): void;
  /**
   * The session is ending: the messages the link already received and has not reported yet (a link that
   * takes them through a queue of its own) are reported to `host` now, at most LINK_DRAIN_MAX_MESSAGES of
   * them and for at most LINK_DRAIN_MAX_MS; messages arriving from now on are not. Then the words the link
   * holds back until their audio comes (Deepgram: a response's text comes before its audio; Gemini: the
   * pieces of a turn) are reported (`said`, unplayed), before the host stops taking them. Resolves when
   * that is done or the time is up. A link that reports each message as it comes and holds nothing back
   * has nothing to do.
   */
  drain?(host: LinkHost): Promise<void>;
  close(): void;
}

/** Messages a link has received and not yet reported that the session's end still takes (ModelLink.drain). */
export const LINK_DRAIN_MAX_MESSAGES = 50;
/** How long the session's end waits for them, ms: a hang-up is not held up for longer. */
export const LINK_DRAIN_MAX_MS = 500;

/** What a refused WebSocket upgrade (the ws client's error) means, said plainly; the body is not echoed. */
export function upgradeError(vendor: string, e: Error): Error {
  const status = /Unexpected server response: (\d+)/.exec(e.message)?.[1];
  if (status === '401' || status === '403') return new Error(`${vendor}: the API key was refused (HTTP ${status})`);
  if (status) return new Error(`${vendor}: the connection was refused (HTTP ${status})`);
  // a key carried in the URL (Gemini's `?key=`) never reaches a message
  return new Error(`${vendor}: the vendor could not be reached (${e.message.replace(/([?&](?:key|access_token)=)[^&\s]+/g, '$1***')})`);
}
