/**
 * The AI member of the flow services: what ai_talk, ai_task and ai_summary need from the node
 * (database, events, the live endpoint of a call, the data directory for recordings).
 */
import type { Logger } from 'pino';
import type { CallEndpoint } from '../media-server/endpoint';
import type { AiDeps } from '../../core/ai/session';
import type { VoiceVendors } from '../../core/speech/vendors';
import type { SpeechToSpeechVendors } from '../../core/speech/s2s-vendors';
import type { CallPort } from '../flow/call-port';
import type { AiTalkEnd, AiTalkFlow, AiTalkOption } from './talk';
import type { AiTaskEnd, AiTaskFlow, AiTaskOption } from './task';

export type { AiTalkEnd, AiTalkFlow, AiTalkOption } from './talk';
export type { AiTaskEnd, AiTaskFlow, AiTaskOption } from './task';

export interface AiService {
  readonly deps: AiDeps;
  readonly dataDir: string;
  readonly logger: Logger;
  /** cloud voice vendors' URLs and platform keys (config.voices) */
  readonly voices: VoiceVendors;
  /** extra CAs (PEM) trusted for the OpenAI Realtime WebSocket (config.openaiRealtimeCaFile) */
  readonly realtimeCa: Buffer | null;
  /** Gemini Live's and Deepgram Voice Agent's URLs and platform keys (config.speechToSpeech) */
  readonly speechToSpeech: SpeechToSpeechVendors;
  /** The media endpoint of a live call this node owns. */
  endpointOf(callId: string): CallEndpoint | null;
  /**
   * ai_talk: a voice conversation with the AI (or team) the option names on `call`, run to its end
   * (media-app/ai/talk.ts). An abort of `signal` rejects it, as does a failure that is not the flow's error.
   */
  talk(call: CallPort, option: AiTalkOption, signal: AbortSignal, flow: AiTalkFlow): Promise<AiTalkEnd>;
  /** ai_task: the AI answers on the flow's context without audio (media-app/ai/task.ts). */
  task(flow: AiTaskFlow, option: AiTaskOption): Promise<AiTaskEnd>;
}

declare module '../flow/services' {
  interface FlowServices {
    ai?: AiService;
  }
}
