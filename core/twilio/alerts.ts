/**
 * What a Twilio debugger record (an Alert, a Notification) keeps of the request that failed, with nothing
 * credential-like whole: a parameter (of the form or the URL's query) whose name says it is a credential
 * (token, secret, password, key, auth, signature), or whose value looks like an AuthToken (32 hex digits),
 * keeps only its last 4 characters; a URL's password likewise; the app's response headers with cookies and
 * authorization masked. Plus Twilio's `alert_text` and `more_info`.
 * No I/O here (core/repos/twilio-alerts.ts stores them).
 */
import type { AlertLevel } from '../db/rows/twilio-alerts';

const SECRET_NAME = /token|secret|passw|pwd|key|auth|signature|credential/i;
const TOKEN_LIKE = /^[0-9a-f]{32}$/i;

/** `****` and the value's last 4 characters (none of a value under 12 characters). */
export function maskSecret(value: string): string {
  return value.length >= 12 ? `****${value.slice(-4)}` : '****';
}

const masked = (name: string, value: string): string => (SECRET_NAME.test(name) || TOKEN_LIKE.test(value) ? maskSecret(value) : value);

/** The request's variables as Twilio shows them (form-encoded, in the order sent), credential-like values masked. */
export function maskedVariables(params: Record<string, string>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) q.append(k, masked(k, v));
  return q.toString();
}

/**
 * The URL with its password and credential-like query values masked. Text that is not a web URL keeps only
 * what stands after a user part and before a query or fragment, to 200 characters: a scheme-less
 * `user:TOKEN@host` or a broken URL with `?Token=…` must not keep the secret whole.
 */
export function maskedUrl(url: string): string {
  let u: URL | null = null;
  try {
    u = new URL(url);
  } catch {
    /* not a URL: as text, below */
  }
  // `bob:TOKEN@host` parses too, as scheme `bob:` with the secret in an opaque path: only web URLs are URLs here
  if (!u || !['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol)) {
    const path = url.split(/[?#]/)[0]!;
    return path.slice(path.lastIndexOf('@') + 1).slice(0, 200);
  }
  if (u.password) u.password = maskSecret(decodeURIComponent(u.password));
  if (!u.search) return u.toString();
  const q = new URLSearchParams();
  for (const [k, v] of u.searchParams) q.append(k, masked(k, v));
  u.search = q.toString();
  return u.toString();
}

/** Response headers whose values are credentials or session state whatever their form. */
const SECRET_HEADER = /^(?:set-cookie|cookie|authorization|proxy-authorization|www-authenticate|proxy-authenticate)$/i;

/**
 * The app's response headers as Twilio's Alerts show them (`response_headers`: form-encoded `Name=value`
 * pairs in the order sent, a repeated header once per value): Set-Cookie, Cookie and the Authorization
 * family keep only `****`, any other credential-like one (by name or an AuthToken-like value) its last 4.
 */
export function maskedHeaders(headers: readonly (readonly [string, string])[]): string {
  const q = new URLSearchParams();
  for (const [k, v] of headers) q.append(k, SECRET_HEADER.test(k) ? '****' : masked(k, v));
  return q.toString();
}

/** Twilio's alert_text: a form-encoded summary (`Msg`, `ErrorCode`, `LogLevel`, `url`). */
export function alertText(code: number, level: AlertLevel, message: string, url: string): string {
  const q = new URLSearchParams({ Msg: message, ErrorCode: String(code), LogLevel: level.toUpperCase() });
  if (url) q.set('url', maskedUrl(url));
  return q.toString();
}

export const moreInfo = (code: number): string => `https://www.twilio.com/docs/errors/${code}`;
