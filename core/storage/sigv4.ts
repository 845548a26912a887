/**
 * AWS Signature Version 4 for S3 (AWS docs: "Authenticating Requests (AWS Signature Version 4)"):
 * the Authorization header form and the presigned-URL (query string) form. Only what S3 needs:
 * service "s3", path segments encoded once (S3 does not double-encode), payload hash sent in
 * x-amz-content-sha256.
 */
import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const SERVICE = 's3';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** RFC 3986 encoding of every byte but the unreserved set; `/` kept when encoding a path. */
export function uriEncode(s: string, keepSlash = false): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) out += c;
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** `20130524T000000Z` and `20130524` of a date. */
export function amzDate(d: Date): { dateTime: string; date: string } {
  const dateTime = d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { dateTime, date: dateTime.slice(0, 8) };
}

export function scopeOf(date: string, region: string): string {
  return `${date}/${region}/${SERVICE}/aws4_request`;
}

export function signingKey(secret: string, date: string, region: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), SERVICE), 'aws4_request');
}

/** Query parameters sorted by encoded name, then value; each name and value encoded once. */
export function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export interface CanonicalInput {
  method: string;
  /** The path as sent, already encoded (e.g. `/bucket/a%20b`). */
  path: string;
  query: [string, string][];
  /** Lower-case names of the signed headers and their values. */
  headers: Record<string, string>;
  payloadHash: string;
}

export function canonicalRequest(r: CanonicalInput): { text: string; signedHeaders: string } {
  const names = Object.keys(r.headers)
    .map((n) => n.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const headerLines = names.map((n) => `${n}:${String(lower[n]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  return { text: [r.method, r.path, canonicalQuery(r.query), headerLines, signedHeaders, r.payloadHash].join('\n'), signedHeaders };
}

export function stringToSign(dateTime: string, scope: string, canonical: string): string {
  return [ALGORITHM, dateTime, scope, sha256Hex(canonical)].join('\n');
}

export function signature(creds: Credentials, date: string, toSign: string): string {
  return createHmac('sha256', signingKey(creds.secretAccessKey, date, creds.region))
    .update(toSign)
    .digest('hex');
}

/**
 * Headers to add to a request: x-amz-date, x-amz-content-sha256 and Authorization. `headers` are
 * the other headers to sign (host at least).
 */
export function signHeaders(
  creds: Credentials,
  req: { method: string; path: string; query?: [string, string][]; headers: Record<string, string>; payloadHash: string },
  now: Date,
): Record<string, string> {
  const { dateTime, date } = amzDate(now);
  const headers = { ...req.headers, 'x-amz-date': dateTime, 'x-amz-content-sha256': req.payloadHash };
  const c = canonicalRequest({ method: req.method, path: req.path, query: req.query ?? [], headers, payloadHash: req.payloadHash });
  const scope = scopeOf(date, creds.region);
  const sig = signature(creds, date, stringToSign(dateTime, scope, c.text));
  return {
    'x-amz-date': dateTime,
    'x-amz-content-sha256': req.payloadHash,
    authorization: `${ALGORITHM} Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${c.signedHeaders}, Signature=${sig}`,
  };
}

/** The query string of a presigned GET (host is the only signed header), valid `expiresSec` from `now`. */
export function presignQuery(creds: Credentials, req: { method: string; path: string; host: string }, now: Date, expiresSec: number): string {
  const { dateTime, date } = amzDate(now);
  const scope = scopeOf(date, creds.region);
  const query: [string, string][] = [
    ['X-Amz-Algorithm', ALGORITHM],
    ['X-Amz-Credential', `${creds.accessKeyId}/${scope}`],
    ['X-Amz-Date', dateTime],
    ['X-Amz-Expires', String(expiresSec)],
    ['X-Amz-SignedHeaders', 'host'],
  ];
  const c = canonicalRequest({ method: req.method, path: req.path, query, headers: { host: req.host }, payloadHash: UNSIGNED_PAYLOAD });
  const sig = signature(creds, date, stringToSign(dateTime, scope, c.text));
  return `${canonicalQuery(query)}&X-Amz-Signature=${sig}`;
}
