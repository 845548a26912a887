/**
 * Twilio's `To` / `From`: an E.164 number, a `sip:` / `sips:` URI, or `client:NAME` (an extension of
 * the customer, by its extension name), as our Address. Anything else is Twilio's 21211 (To) or 21212 (From).
 */
import type { Address } from '../../core/address';
import { isE164 } from '../../core/numbers/e164';
import { badParam } from './errors';

const CLIENT = /^client:([A-Za-z0-9_.@+-]{1,64})$/;
const SIP = /^sips?:[^\s<>"]{1,1000}$/i;

/** The Address a Twilio request's To or From names: core/address.ts's, of one of these types. */
export type TwilioAddress = Address & { type: 'tel' | 'sip' | 'extension' };

export function addressOf(field: 'To' | 'From', value: string | undefined): TwilioAddress {
  const missing = field === 'To' ? 21201 : 21603;
  const invalid = field === 'To' ? 21211 : 21212;
  if (value === undefined || value.trim() === '') throw badParam(`A '${field}' phone number is required.`, missing);
  const v = value.trim();
  if (isE164(v)) return { type: 'tel', target: v };
  if (SIP.test(v)) return { type: 'sip', target: v };
  const c = CLIENT.exec(v);
  if (c) return { type: 'extension', target: c[1]!, target_name: c[1]! };
  throw badParam(`Invalid '${field}' Phone Number: ${value.trim().slice(0, 100)}`, invalid);
}
