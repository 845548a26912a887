/**
 * A customer's TwiML web app on loopback: answers each path with the TwiML a test gives (built with
 * twilio.twiml.VoiceResponse), records every request with its parameters and checks its
 * X-Twilio-Signature with the official `twilio.validateRequest`, on the URL as Express presents it
 * (as received) and as Flask/werkzeug does (`request.url`, werkzeug-url.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { werkzeugRequestUrl } from './werkzeug-url';

export interface TwimlRequest {
  path: string;
  method: string;
  params: Record<string, string>;
  /** twilio.validateRequest's verdict on X-Twilio-Signature (the URL as received, as Express has it). */
  signed: boolean;
  /** The same on the URL as a Flask app sees it (werkzeug's `request.url`). */
  signedAsFlask: boolean;
  /** The request target as received (path and query). */
  target: string;
  signature: string;
  /** received (the whole body read), performance.now() */
  at: number;
  /** its answer written out, performance.now() */
  answeredAt?: number;
}

/** What a path answers: TwiML text (200), or a status with a body. */
export type TwimlAnswer = string | { status: number; body: string | Buffer; contentType?: string; headers?: Record<string, string | string[]> };

export class TwimlServer {
  readonly requests: TwimlRequest[] = [];
  private readonly routes = new Map<string, (req: TwimlRequest) => TwimlAnswer>();
  private readonly waiters: (() => void)[] = [];
  private readonly taken = new Set<TwimlRequest>();

  private constructor(
    private readonly server: http.Server,
    readonly base: string,
    private authToken: string,
  ) {}

  static async start(authToken = ''): Promise<TwimlServer> {
    let self: TwimlServer | null = null;
    const server = http.createServer((req, res) => void self!.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    self = new TwimlServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authToken);
    return self;
  }

  /** The key requests must be signed with (the customer's AuthToken). */
  setAuthToken(token: string): void {
    this.authToken = token;
  }

  url(path: string): string {
    return this.base + path;
  }

  on(path: string, answer: TwimlAnswer | ((req: TwimlRequest) => TwimlAnswer)): this {
    this.routes.set(path, typeof answer === 'function' ? answer : () => answer);
    return this;
  }

  /** Resolves once a request for `path` has come (the first one not yet taken by an earlier wait). */
  async next(path: string, timeoutMs = 20_000): Promise<TwimlRequest> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.requests.find((r) => r.path === path && !this.taken.has(r));
      if (hit) {
        this.taken.add(hit);
        return hit;
      }
      if (Date.now() > deadline) throw new Error(`no request for ${path} within ${timeoutMs} ms (got ${this.requests.map((r) => r.path).join(', ') || 'none'})`);
      await this.arrival();
    }
  }

  /** The next request's arrival, or 100 ms. */
  private arrival(): Promise<void> {
    return new Promise<void>((r) => {
      const t = setTimeout(r, 100);
      this.waiters.push(() => {
        clearTimeout(t);
        r();
      });
    });
  }

  /** Resolves with every request for `path` so far once there are at least `n` of them. */
  async atLeast(path: string, n: number, timeoutMs = 20_000): Promise<TwimlRequest[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = this.requests.filter((r) => r.path === path);
      if (got.length >= n) return got;
      if (Date.now() > deadline) throw new Error(`${n} callbacks on ${path}: ${got.length} within ${timeoutMs} ms`);
      await this.arrival();
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const u = new URL(req.url ?? '/', this.base);
    const params: Record<string, string> = {};
    const body = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'POST') for (const [k, v] of new URLSearchParams(body)) params[k] = v;
    else for (const [k, v] of u.searchParams) params[k] = v;
    const fullUrl = this.base + (req.url ?? '/');
    const signature = String(req.headers['x-twilio-signature'] ?? '');
    const signedParams = req.method === 'POST' ? params : {};
    const signed = twilio.validateRequest(this.authToken, signature, fullUrl, signedParams);
    const signedAsFlask = twilio.validateRequest(this.authToken, signature, werkzeugRequestUrl(this.base, req.url ?? '/'), signedParams);
    const r: TwimlRequest = { path: u.pathname, method: req.method ?? '', params, signed, signedAsFlask, target: req.url ?? '/', signature, at: performance.now() };
    this.requests.push(r);
    for (const w of this.waiters.splice(0)) w();
    const route = this.routes.get(u.pathname);
    const answer: TwimlAnswer = route ? route(r) : { status: 404, body: 'not found' };
    if (typeof answer === 'string') {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(answer);
    } else {
      res.writeHead(answer.status, { ...answer.headers, 'content-type': answer.contentType ?? 'text/plain' });
      res.end(answer.body);
    }
    r.answeredAt = performance.now();
  }
}
