/**
 * Our extension (issue 36, TwiML <Connect><ConversationRelay>): conversation_relay opens the app's
 * WebSocket and speaks Twilio's ConversationRelay protocol (core/twilio/relay-protocol.ts) over the
 * platform's recogniser and voices (local, or a configured cloud vendor) until the app ends it, the socket closes or the call ends.
 */
import { z } from 'zod';
import { LOCAL_TTS_TYPES, VENDOR_TTS_TYPES } from '../../speech/voices';

const lang = z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, 'must be a language tag such as en-US');
/** A local voice, or a cloud vendor of media-app/voices (its URL and key from the node's config). */
const ttsProvider = z.enum([...LOCAL_TTS_TYPES, ...VENDOR_TTS_TYPES]);
const sttProvider = z.enum(['', 'pocketsphinx', 'deepgram']);
/** What may cut the agent's speech: the caller's speech, a key, either, or nothing. */
export const RELAY_INTERRUPTIBLE = ['any', 'speech', 'dtmf', 'none'] as const;

export const conversation_relay = z.object({
  /** The app's WebSocket (ws:// or wss://), opened through the egress policy. */
  url: z.string().regex(/^wss?:\/\/[^\s/]+/i, 'must be a ws:// or wss:// URL'),
  /** Spoken once the app has been sent `setup` (empty: nothing). */
  welcome_greeting: z.string().max(4096, 'must be at most 4096 characters').optional(),
  welcome_greeting_interruptible: z.enum(RELAY_INTERRUPTIBLE).optional(),
  /** Both directions' language (default en-US); tts_language / transcription_language override one. */
  language: lang.optional(),
  tts_language: lang.optional(),
  transcription_language: lang.optional(),
  tts_provider: ttsProvider.optional(),
  voice: z.string().max(100, 'must be at most 100 characters').optional(),
  stt_provider: sttProvider.optional(),
  /** Phrases the recogniser expects (pocketsphinx: only these; deepgram: keywords). */
  phrases: z.array(z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters')).max(500, 'must have at most 500 phrases').optional(),
  /** Default any. */
  interruptible: z.enum(RELAY_INTERRUPTIBLE).optional(),
  /** Send the caller's keys to the app as `dtmf` messages (default false). */
  dtmf_detection: z.boolean().optional(),
  /** The setup message's customParameters. */
  parameters: z.record(z.string(), z.string()).optional(),
  /** Per language (the app's `language` message picks one): its voice and recogniser. */
  languages: z
    .array(z.object({ code: lang, tts_provider: ttsProvider.optional(), voice: z.string().max(100).optional(), stt_provider: sttProvider.optional() }).strict())
    .max(50, 'must have at most 50 languages')
    .optional(),
});
