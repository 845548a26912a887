/**
 * HTTP(S) through the egress policy: every hop (the first request and each redirect) is resolved
 * and checked, and the socket is pinned to the checked address (TLS still verifies the name).
 * One deadline bounds the whole exchange, from the first lookup to the last body byte; maxBytes
 * bounds the body. Transport failures all read the same ("could not be reached or did not answer
 * in time"), so a refused port, a reset and a silent one cannot be told apart.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { EgressFailed, EgressRefused } from './errors';
import type { EgressPolicy } from './policy';

export interface EgressRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole exchange, lookup to last byte (default 10 s). */
  timeoutMs?: number;
  /** Largest body accepted (default 1 MiB). */
  maxBytes?: number;
  /** Redirects followed, each re-checked (default 0: a 3xx is returned as it is). */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface EgressHead {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The headers as sent: name, value, name, value... (names in their case, repeats kept). */
  rawHeaders?: string[];
  /** The URL that answered (after redirects). */
  url: string;
}

export interface EgressResponse extends EgressHead {
  body: Buffer;
}

export interface EgressStream extends EgressHead {
  /** The body, bounded by maxBytes and the deadline (both end it with EgressFailed). */
  body: AsyncIterable<Buffer>;
  /** Drops the connection (the body need not be read). */
  close(): void;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
const UNREACHABLE = 'the server could not be reached or did not answer in time';

function failure(caller: AbortSignal | undefined): EgressFailed {
  if (caller?.aborted) return new EgressFailed('aborted', 'the request was cancelled');
  return new EgressFailed('unreachable', UNREACHABLE);
}

/** Rejects when `signal` aborts first. */
function raced<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/**
 * The path and query of `input` exactly as written, when they can go on the request line as they
 * are (printable ASCII, no backslash) and the authority is plain; else undefined (the URL parser's
 * form is sent). A signed URL (X-Twilio-Signature covers the URL as written: `'` stays `'`, where
 * the parser would send `%27`) is thus received as it was signed. The host is the parsed URL's.
 */
export function writtenTarget(input: string | URL): string | undefined {
  if (typeof input !== 'string') return undefined;
  const m = /^https?:\/\/([^/?#\\@]*)([^#]*)/i.exec(input);
  const rest = m?.[2];
  if (!rest || !/^[\x21-\x7e]*$/.test(rest) || rest.includes('\\')) return undefined;
  return rest.startsWith('?') ? `/${rest}` : rest.startsWith('/') ? rest : undefined;
}

function once(
  url: URL,
  path: string | undefined,
  lookup: net.LookupFunction,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const h: Record<string, string | number> = { ...headers };
    if (body !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-length')) h['Content-Length'] = Buffer.byteLength(body);
    const req = lib.request(url, { method, headers: h, lookup, signal, ...(path ? { path } : {}) });
    req.on('response', resolve);
    req.on('error', reject);
    req.end(body);
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Opens `input` through the policy; the caller reads or closes the body. */
export async function egressOpen(policy: EgressPolicy, input: string | URL, req: EgressRequest = {}): Promise<EgressStream> {
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
  const deadline = AbortSignal.timeout(req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
  let url = policy.assertUrlSyntax(input);
  let path = writtenTarget(input);
  let method = (req.method ?? 'GET').toUpperCase();
  let body = req.body;
  let headers = { ...(req.headers ?? {}) };
  for (let hop = 0; ; hop++) {
    let res: http.IncomingMessage;
    try {
      const checked = await raced(policy.resolveAndCheck(url.hostname), signal);
      res = await once(url, path, checked.lookup, method, headers, body, signal);
    } catch (e) {
      if (e instanceof EgressRefused) throw hop ? new EgressRefused(e.reason === 'url' ? 'redirect' : e.reason, `a redirect led somewhere not allowed: ${e.message}`) : e;
      throw failure(req.signal);
    }
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location && (req.maxRedirects ?? 0) > 0) {
      res.destroy();
      if (hop >= (req.maxRedirects ?? 0)) throw new EgressFailed('too-many-redirects', `more than ${req.maxRedirects} redirects`);
      let next: URL;
      try {
        next = policy.assertUrlSyntax(new URL(location, url), 'a redirect');
      } catch (e) {
        if (e instanceof EgressRefused) throw new EgressRefused('redirect', e.message.replace(/^a redirect/, 'a redirect led somewhere not allowed: it'));
        throw e;
      }
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
      }
      // credentials go to the origin they were meant for only
      if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^(authorization|cookie)$/i.test(k)));
      url = next;
      path = undefined;
      continue;
    }
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > maxBytes) {
      res.destroy();
      throw new EgressFailed('too-large', `the response is larger than ${maxBytes} bytes`);
    }
    return { status, headers: res.headers, rawHeaders: res.rawHeaders, url: url.href, body: bounded(res, maxBytes, signal, req.signal), close: () => res.destroy() };
  }
}

async function* bounded(res: http.IncomingMessage, maxBytes: number, signal: AbortSignal, caller: AbortSignal | undefined): AsyncGenerator<Buffer> {
  let n = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      n += chunk.length;
      if (n > maxBytes) throw new EgressFailed('too-large', `the response is larger than ${maxBytes} bytes`);
      yield chunk;
    }
    if (signal.aborted) throw failure(caller);
  } catch (e) {
    if (e instanceof EgressFailed) throw e;
    throw failure(caller);
  } finally {
    res.destroy();
  }
}

/** Fetches `input` through the policy and reads the whole (bounded) body. */
export async function egressFetch(policy: EgressPolicy, input: string | URL, req: EgressRequest = {}): Promise<EgressResponse> {
  const s = await egressOpen(policy, input, req);
  const parts: Buffer[] = [];
  for await (const c of s.body) parts.push(c);
  return { status: s.status, headers: s.headers, rawHeaders: s.rawHeaders, url: s.url, body: Buffer.concat(parts) };
}
