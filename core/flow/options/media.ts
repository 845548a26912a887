/** Options of the actions that act on the call's media (reference schemas FlowManagerActionOption*). */
import { z } from 'zod';
import { HANGUP_REASONS, mediaUrl, millis, none, uuidOrVar } from './common';
import { LOCAL_TTS_TYPES } from '../../speech/voices';

export const answer = none;
export const beep = none;
export const recording_stop = none;

export const sleep = z.object({ duration: millis.optional() });

/** duration <= 0 means 180 s (voipbin). */
export const echo = z.object({ duration: z.number().int('must be an integer').optional() });
export const stream_echo = echo;

export const talk = z.object({
  text: z.string().min(1, 'must not be empty'),
  language: z.string().optional(),
  // the voices talk speaks with; a cloud voice or unknown name is refused, never replaced by the default
  provider: z
    .string()
    .refine((p) => !p || (LOCAL_TTS_TYPES as readonly string[]).includes(p), {
      error: (i) => `provider "${String(i.input)}" is not a voice talk can speak with; use one of: ${LOCAL_TTS_TYPES.join(', ')} (cloud voices: an AI's tts_type in ai_talk)`,
    })
    .optional(),
  voice_id: z.string().optional(),
  /** Older clients still send it (OpenAPI); kept, not used. */
  gender: z.string().optional(),
  digits_handle: z.enum(['', 'next']).optional(),
  async: z.boolean().optional(),
});

export const play = z.object({
  stream_urls: z.array(mediaUrl).min(1, 'must contain at least one URL'),
});

export const digits_receive = z.object({
  duration: millis.optional(),
  length: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  key: z
    .string()
    .regex(/^[0-9A-D#*]*$/, 'must be DTMF keys (0-9, A-D, #, *)')
    .optional(),
});

export const digits_send = z.object({
  digits: z
    .string()
    .max(100, 'at most 100 keys')
    .regex(/^[0-9A-D#*]*$/, 'must be DTMF keys (0-9, A-D, #, *)'),
  duration: z.number().int('must be an integer').min(100, 'must be >= 100').max(1000, 'must be <= 1000').optional(),
  interval: z.number().int('must be an integer').min(0, 'must be >= 0').max(5000, 'must be <= 5000').optional(),
});

export const recording_start = z.object({
  format: z.enum(['wav']).optional(),
  end_of_silence: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  end_of_key: z
    .string()
    .regex(/^(|none|any|[0-9A-D#*])$/, 'must be none, any or one DTMF key')
    .optional(),
  duration: z.number().int('must be an integer').min(0, 'must be >= 0').optional(),
  beep_start: z.boolean().optional(),
  on_end_flow_id: uuidOrVar,
  /** Our extension: the recording's `source` in the Twilio view (Calls create with Record=true sets OutboundAPI). */
  twilio_source: z.enum(['OutboundAPI']).optional(),
});

export const amd = z.object({
  machine_handle: z.enum(['hangup', 'continue']).optional(),
  async: z.boolean().optional(),
  /** Platform extension, voicemail drop: on a machine, wait for the beep, then speak this text... */
  voicemail_text: z.string().max(4000).optional(),
  voicemail_language: z.string().optional(),
  /** ...or play these files/URLs (after the text, when both are given). */
  voicemail_urls: z.array(z.string()).max(10).optional(),
});

export const hangup = z.object({
  reason: z.enum(HANGUP_REASONS).optional(),
  reference_id: uuidOrVar,
});

/** voipbin's mute takes no option (and is a no-op there); ours mutes, `both` unless told. */
export const mute = z.object({ direction: z.enum(['both', 'in', 'out']).optional() });
