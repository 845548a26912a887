/**
 * Outbound HTTP for fetch and webhook_send. Private, loopback and link-local targets are refused
 * unless allowed (voipbin refuses them always; ours makes it a setting so local receivers work).
 */
import dns from 'node:dns/promises';
import net from 'node:net';

export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  body: string;
}

export interface FlowHttp {
  request(req: HttpRequest): Promise<HttpResponse>;
}

export interface HttpPolicy {
  /** Allow loopback, private, link-local and CGN addresses as targets. */
  allowPrivateTargets: boolean;
}

export function isPrivateAddress(ip: string): boolean {
  if (net.isIPv4(ip)) {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  const v = ip.toLowerCase();
  if (v.startsWith('::ffff:')) return isPrivateAddress(v.slice(7));
  return v === '::' || v === '::1' || v.startsWith('fc') || v.startsWith('fd') || v.startsWith('fe8') ||
    v.startsWith('fe9') || v.startsWith('fea') || v.startsWith('feb');
}

export class FetchHttp implements FlowHttp {
  constructor(private readonly policy: HttpPolicy = { allowPrivateTargets: false }) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported URL scheme ${url.protocol}`);
    if (!this.policy.allowPrivateTargets) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const addrs = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
      if (addrs.some(isPrivateAddress)) throw new Error(`refused: ${url.hostname} is a private or loopback address`);
    }
    const timeout = AbortSignal.timeout(req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const res = await fetch(url, { method: req.method, headers: req.headers, body: req.body, signal, redirect: 'error' });
    const max = req.maxBytes ?? 1024 * 1024;
    const reader = res.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > max) {
          await reader.cancel();
          throw new Error(`response larger than ${max} bytes`);
        }
        chunks.push(value);
      }
    }
    return { status: res.status, body: Buffer.concat(chunks).toString('utf8') };
  }
}
