/** An HTTP server with the WebSocket service on a free loopback port, over a private event stream. */
import http from 'node:http';
import { WebSocket } from 'ws';
import { buildTestApp, type TestApp } from '../../../testkit/api';
import { freePort } from '../../../testkit/ports';
import { attachWebSocket, type WebSocketOptions, type WebSocketService } from '../../../control-api/ws';
import { EventPublisher } from '../../../core/events/bus';
import { newId } from '../../../core/ids';

export interface WsHarness {
  t: TestApp;
  server: http.Server;
  ws: WebSocketService;
  stream: string;
  publisher: EventPublisher;
  url(query: string): string;
  close(): Promise<void>;
}

export async function startWs(opts: WebSocketOptions = {}, env: Record<string, string> = {}): Promise<WsHarness> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', ...env } });
  const stream = `test-ws-${newId()}`;
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ws = await attachWebSocket(server, t.ctx, { stream, ...opts });
  const publisher = new EventPublisher(t.ctx.redis, stream);
  return {
    t,
    server,
    ws,
    stream,
    publisher,
    url: (q) => `ws://127.0.0.1:${port}/v1.0/ws?${q}`,
    async close() {
      await ws.close();
      await t.ctx.redis.del(stream);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

export interface Client {
  socket: WebSocket;
  frames: { event_type: string; timestamp: string; topic: string; data: Record<string, unknown> }[];
  closed: Promise<{ code: number; reason: string }>;
  send(msg: unknown): void;
  waitFor(n: number, timeoutMs?: number): Promise<void>;
}

export async function connect(url: string): Promise<Client> {
  const socket = new WebSocket(url);
  const frames: Client['frames'] = [];
  const closed = new Promise<{ code: number; reason: string }>((r) => socket.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  socket.on('message', (d) => frames.push(JSON.parse(d.toString()) as Client['frames'][number]));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return {
    socket,
    frames,
    closed,
    send: (m) => socket.send(JSON.stringify(m)),
    async waitFor(n, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs;
      while (frames.length < n) {
        if (Date.now() > end) throw new Error(`got ${frames.length} of ${n} frames`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** Lets a subscribe message reach the server before the test publishes. */
export const settle = (ms = 100) => new Promise((r) => setTimeout(r, ms));
