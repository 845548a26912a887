/**
 * A stand-in of Paddle's Billing API on loopback, for tests: a real HTTP server answering
 * POST /customers/{ctm_...}/portal-sessions as Paddle does (201, `data.urls.general.overview`), checking
 * the bearer key; any other request gets Paddle's error form. `mode` makes it fail (500, or a 200 that
 * is not JSON, or no answer at all); every error carries `SECRET_TEXT` so a test can check it is not echoed. Requests are
 * kept in `seen`.
 *
 *   const paddle = await startPaddleServer('pdl_live_apikey_...');
 *   process.env.PADDLE_API_URL = paddle.url;
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const PADDLE_SECRET_TEXT = 'internal paddle detail 7f3a';

export interface PaddleSeen {
  method: string;
  path: string;
  auth: string;
  type: string;
  body: unknown;
}

export interface PaddleServer {
  url: string;
  seen: PaddleSeen[];
  /** ok; error500: Paddle's 500; notjson: a 200 HTML page; hang: never answers (until closed). */
  mode: 'ok' | 'error500' | 'notjson' | 'hang';
  /** The overview URL of a session for `customerId`. */
  overview(customerId: string): string;
  close(): Promise<void>;
}

export async function startPaddleServer(key: string): Promise<PaddleServer> {
  const overview = (customerId: string) => `https://customer-portal.paddle.com/cpl_01j7zbyqs3vah3c4sfcqk9r2d6?action=overview&token=pga_${customerId.slice(4)}`;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      out.seen.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization ?? '', type: req.headers['content-type'] ?? '', body });
      const send = (status: number, json: object) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
      const paddleError = (status: number, code: string) =>
        send(status, { error: { type: 'request_error', code, detail: PADDLE_SECRET_TEXT, documentation_url: `https://developer.paddle.com/errors/shared/${code}` }, meta: { request_id: 'b2a1' } });
      if (req.headers.authorization !== `Bearer ${key}`) return paddleError(403, 'forbidden');
      const m = /^\/customers\/(ctm_[a-z0-9]+)\/portal-sessions$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) return paddleError(404, 'not_found');
      if (out.mode === 'hang') return;
      if (out.mode === 'error500') return paddleError(500, 'internal_error');
      if (out.mode === 'notjson') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<html>${PADDLE_SECRET_TEXT}</html>`);
      send(201, {
        data: { id: 'cpls_01h8bxq9f3e4t5a6g7h8j9k0m', customer_id: m[1], urls: { general: { overview: overview(m[1]!) }, subscriptions: [] }, created_at: '2026-11-22T13:00:00Z' },
        meta: { request_id: 'a1b2' },
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const out: PaddleServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: [],
    mode: 'ok',
    overview,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return out;
}
