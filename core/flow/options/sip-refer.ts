/**
 * Our extension (issue 36, TwiML <Refer>): sip_refer sends a SIP REFER (RFC 3515) to the far end of
 * the call's own SIP leg and waits for the outcome its NOTIFYs report. Sets svc.refer.status
 * (in-progress: the referred call was answered; failed: the REFER was refused or the referred call
 * failed or no final NOTIFY came within `timeout`) and svc.refer.sip_code (the REFER's answer when it
 * was refused, else the final NOTIFY's sipfrag status; empty when none came).
 */
import { z } from 'zod';
import { millis } from './common';

export const sip_refer = z.object({
  /** The Refer-To URI: sip: or sips:, no spaces or angle brackets (it is written into a header). */
  refer_to: z
    .string()
    .max(1024, 'must be at most 1024 characters')
    .regex(/^sips?:[^\s<>"]+$/i, 'must be a sip: or sips: URI'),
  /** How long to wait for the final NOTIFY after the REFER was accepted, ms (default 60000). */
  timeout: millis.max(600_000, 'must be at most 600000').optional(),
});
