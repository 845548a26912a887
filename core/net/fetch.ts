/**
 * A WHATWG `fetch` whose every request goes through the egress policy (each hop resolved, checked
 * and pinned, one deadline, a bounded body): for vendor SDKs that accept a custom fetch (e.g.
 * `@google/genai`'s `httpOptions.fetch`). A refused address rejects with EgressRefused, a transport
 * failure with EgressFailed, exactly as `policy.open` does.
 */
import type { EgressPolicy } from './policy';

export interface PolicyFetchOptions {
  /** Whole exchange, lookup to last body byte. */
  timeoutMs: number;
  /** Largest body accepted. */
  maxBytes: number;
}

export type PolicyFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Statuses whose Response must not carry a body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

function headersOf(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((v, k) => (out[k] = v));
  return out;
}

function bodyOf(body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  // streams and forms are not what the SDKs send for JSON APIs: said, not guessed
  throw new TypeError('the egress fetch takes a string or byte body only');
}

export function policyFetch(policy: EgressPolicy, opts: PolicyFetchOptions): PolicyFetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const s = await policy.open(url, {
      method: init.method ?? 'GET',
      headers: headersOf(init.headers),
      body: bodyOf(init.body),
      signal: init.signal ?? undefined,
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(s.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    }
    if (NO_BODY.has(s.status)) {
      s.close();
      return new Response(null, { status: s.status, headers });
    }
    const it = s.body[Symbol.asyncIterator]();
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        try {
          const r = await it.next();
          if (r.done) c.close();
          else c.enqueue(new Uint8Array(r.value));
        } catch (e) {
          c.error(e);
        }
      },
      cancel() {
        s.close();
      },
    });
    return new Response(stream, { status: s.status, headers });
  };
}
