import { createHmac, timingSafeEqual } from 'node:crypto';

/** Request parameters as Twilio signs them: each name with one value or several (repeated keys). */
export type SignedParams = Record<string, string | readonly string[]>;

/**
 * `X-Twilio-Signature`: base64 of HMAC-SHA1, keyed by the account's auth token, over the full URL
 * (query string included) followed by each POST parameter's name and value, names sorted
 * (a repeated name contributes each of its values, in order). GET requests sign the URL alone.
 * This is the scheme `twilio.validateRequest` checks.
 */
export function twilioSignature(authToken: string, url: string, params: SignedParams = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const v = params[name]!;
    for (const value of typeof v === 'string' ? [v] : v) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Whether `signature` is the one `twilioSignature` gives, compared in constant time. */
export function validTwilioSignature(authToken: string, signature: unknown, url: string, params: SignedParams = {}): boolean {
  if (typeof signature !== 'string') return false;
  const want = Buffer.from(twilioSignature(authToken, url, params));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}
