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

/**
 * Characters a GET webhook's query keeps as they are, as Twilio sends them: RFC 3986's unreserved
 * ones, `:` and `@` (so `client:alice`, `sip:bob@example.com` read as written), `/` and `?`, and the
 * sub-delimiters but the query's own `&`, `=` and `+`. A space is `+`; anything else is
 * percent-encoded as UTF-8 (upper-case hex). Such a URL is what werkzeug (Flask) presents as
 * `request.url` byte for byte when it is ASCII, and what Express presents as it came; the official
 * validators accept both (docs/twilio.md "Webhook signatures").
 */
const QUERY_KEEP = /^[A-Za-z0-9\-._~!$'()*,;:@/?]$/;

/** One name or value of a GET webhook's query, encoded as Twilio encodes it. */
export function twilioQueryComponent(s: string): string {
  let out = '';
  for (const ch of s) {
    if (ch === ' ') out += '+';
    else if (QUERY_KEEP.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A webhook request as sent: the URL to request, the form body (POST), the X-Twilio-Signature. */
export interface SignedWebhook {
  url: string;
  body: string | undefined;
  signature: string;
}

/**
 * A Twilio webhook to `target`: GET puts the parameters in the query (after any the URL has) and
 * signs that URL; POST sends them as a form and signs the URL and the parameters. The URL must be
 * requested exactly as returned (core/net sends a printable ASCII path and query as written).
 */
export function signedWebhook(authToken: string, method: 'GET' | 'POST', target: string, params: Record<string, string>): SignedWebhook {
  if (method === 'POST') return { url: target, body: new URLSearchParams(params).toString(), signature: twilioSignature(authToken, target, params) };
  const query = Object.entries(params)
    .map(([k, v]) => `${twilioQueryComponent(k)}=${twilioQueryComponent(v)}`)
    .join('&');
  const sep = !target.includes('?') ? '?' : /[?&]$/.test(target) ? '' : '&';
  const url = query ? target + sep + query : target;
  return { url, body: undefined, signature: twilioSignature(authToken, url) };
}
