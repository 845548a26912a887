/**
 * Our extension (issue 36, TwiML <Gather input="speech">): speech_gather listens for the caller's
 * words with the platform's recogniser while its prompts play, and (with `dtmf`) for keys too.
 */
import { z } from 'zod';
import { mediaUrl, millis } from './common';
import { talk } from './media';

const prompt = z.union([
  // a prompt speaks as talk does (the same voices; a cloud voice is refused)
  z.object({ talk: talk.pick({ text: true, language: true, provider: true }).strict() }).strict(),
  z.object({ play: z.object({ stream_urls: z.array(mediaUrl).min(1, 'must contain at least one URL') }).strict() }).strict(),
  z.object({ pause: millis }).strict(),
]);

export const speech_gather = z.object({
  /** What the caller hears while the action listens, in order (at most 100). */
  prompts: z.array(prompt).max(100, 'must have at most 100 prompts').optional(),
  /** Speech (VAD) or a key cuts the prompts short (default true). */
  barge_in: z.boolean().optional(),
  /** BCP-47 (default en-US), checked with the recogniser when the action runs. */
  language: z.string().optional(),
  /** STT provider: '' or pocketsphinx (default), deepgram, cartesia, elevenlabs. */
  provider: z.string().optional(),
  /** Phrases the recogniser should expect (pocketsphinx: only these; deepgram: keywords). */
  phrases: z.array(z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters')).max(500, 'must have at most 500 phrases').optional(),
  /** Wait for the caller to start (speaking or pressing a key) after the prompts, ms (default 5000). */
  timeout: millis.optional(),
  /** Silence after speech that ends it, ms; 0 = auto (the recogniser's end of utterance, 1 s of silence at most) (default 0). */
  speech_timeout: millis.optional(),
  /** The longest answer, ms (default 60000; 0 = the default). */
  max_speech: millis.optional(),
  /** Also collect DTMF; whichever of a key or speech comes first wins. */
  dtmf: z.boolean().optional(),
  /** With dtmf: this many digits end it (0: no limit). */
  digits_length: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  /** With dtmf: this key ends it (kept in svc.call.digits). */
  digits_key: z
    .string()
    .regex(/^[0-9#*]?$/, 'must be one key (0-9, #, *) or empty')
    .optional(),
  /** TwiML partialResultCallback: each recognised segment is sent here while listening (signed; needs the twiml subsystem). */
  partial_callback: z
    .string()
    .regex(/^https?:\/\/[^\s/]+/i, 'must be an http or https URL')
    .optional(),
  /** Default POST. */
  partial_callback_method: z.enum(['GET', 'POST']).optional(),
});
