/** Options of the voicemail actions (an extension of the reference action list, issue 37; docs/pbx.md). */
import { z } from 'zod';
import { requiredUuidOrVar, uuidOrVar } from './common';

/** Leave a message in a box: its greeting (or the override), a beep, then the caller's message. */
export const voicemail = z.object({
  box_id: requiredUuidOrVar,
  /** Which greeting plays: the box's unavailable (default) or busy greeting, or none. */
  greeting: z.enum(['unavailable', 'busy', 'none']).optional(),
  /** The beep before recording (default true). */
  beep: z.boolean().optional(),
  /** Seconds; capped by the box's max_message_sec. */
  max_length: z.number().int('must be an integer').min(1, 'must be >= 1').max(3600, 'must be <= 3600').optional(),
});

/** The voice menu of a box: with no box_id the caller keys in the box number, then the PIN. */
export const voicemail_main = z.object({
  box_id: uuidOrVar,
  /** Skip the PIN (the caller is the box's own authenticated extension; feature code *97). */
  skip_pin: z.boolean().optional(),
});
