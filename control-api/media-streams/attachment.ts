/**
 * GET /v1.0/calls/{id}/media_stream and /v1.0/conferences/{id}/media_stream: the WebSocket upgrade
 * of a media stream. control-api admits the request (admission.ts), opens the relay to the node
 * that owns the audio (relay-client.ts), answers 101 and then pumps audio: 20 ms PCM chunks from the
 * node encapsulated toward the client, the client's audio back to the node. The stream closes when
 * the call or conference ends (1000), the credential expires (1008 "token expired"), the client
 * leaves, or control-api stops (1001).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request } from 'express';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Attachment } from '../attachments';
import type { AppContext } from '../context';
import { createCredentials } from '../middleware/credentials';
import { ApiError } from '../../core/errors';
import { CLOSE_NORMAL, CLOSE_POLICY, StreamSocket } from '../../core/streams/stream-socket';
import { admit, matchStreamPath, type Admitted } from './admission';
import { connectRelay } from './relay-client';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 500: 'Internal Server Error', 503: 'Service Unavailable' };

function refuse(socket: Duplex, e: unknown, requestId: string): void {
  const err = e instanceof ApiError ? e : new ApiError('INTERNAL', 'internal error');
  const body = JSON.stringify(err.toEnvelope(requestId));
  socket.end(
    `HTTP/1.1 ${err.http} ${STATUS_TEXT[err.http] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

interface Session {
  client: StreamSocket;
  relay: WebSocket;
  timer: NodeJS.Timeout | null;
}

/** Joins an accepted client socket and an open relay until either ends. */
function run(a: Admitted, ws: WebSocket, relay: WebSocket, sessions: Set<Session>, ctx: AppContext): void {
  const client = new StreamSocket(ws, { encapsulation: a.encapsulation, streamId: a.id });
  const s: Session = { client, relay, timer: null };
  sessions.add(s);
  relay.on('message', (data: RawData, isBinary: boolean) => {
    if (isBinary) client.send(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));
  });
  relay.on('close', (_code: number, reason: Buffer) => client.close(CLOSE_NORMAL, reason.toString() || 'stream ended'));
  client.on('audio', (pcm: Buffer) => {
    if (relay.readyState === relay.OPEN) relay.send(pcm, { binary: true });
  });
  client.on('closed', () => {
    sessions.delete(s);
    if (s.timer) clearTimeout(s.timer);
    relay.close(1000, 'client left');
    ctx.logger.info({ target: a.target, id: a.id, encapsulation: a.encapsulation, ...client.stats }, 'media stream closed');
  });
  // the node may have ended the relay while the client's upgrade was being answered
  if (relay.readyState !== relay.OPEN) client.close(CLOSE_NORMAL, 'stream ended');
  if (a.expiresAtMs !== null) {
    // setTimeout holds at most ~24.8 days; a longer-lived credential is re-armed on the way
    const arm = () => {
      const left = a.expiresAtMs! - Date.now();
      if (left <= 0) return client.close(CLOSE_POLICY, 'token expired');
      s.timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
      s.timer.unref();
    };
    arm();
  }
}

export const attachment: Attachment = {
  name: 'media-streams',
  async start(server: http.Server, ctx: AppContext) {
    const credentials = createCredentials(ctx, { cacheTtlMs: 1000 });
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
    const sessions = new Set<Session>();
    const pending = new Set<Duplex>();

    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = matchStreamPath(url.pathname);
      if (!match) return; // another upgrade handler's path
      const requestId = (typeof req.headers['x-request-id'] === 'string' && req.headers['x-request-id'].slice(0, 128)) || randomUUID();
      const fake = { headers: req.headers, query: Object.fromEntries(url.searchParams) } as unknown as Request;
      pending.add(socket);
      socket.on('error', () => undefined);
      (async () => {
        const a = await admit(ctx, credentials, fake, url, match.target, match.rawId);
        const relay = await connectRelay(a.relay, a.target, a.id);
        if (socket.destroyed) return void relay.close(1000, 'client left');
        wss.handleUpgrade(req, socket, head, (ws) => run(a, ws, relay, sessions, ctx));
      })().then(
        () => pending.delete(socket),
        (e: unknown) => {
          pending.delete(socket);
          if (!(e instanceof ApiError)) ctx.logger.warn({ err: String(e), path: url.pathname }, 'media stream upgrade failed');
          refuse(socket, e, requestId);
        },
      );
    };
    server.on('upgrade', onUpgrade);

    return {
      async close() {
        server.off('upgrade', onUpgrade);
        for (const s of pending) s.destroy();
        for (const s of sessions) s.client.close(1001, 'server stopping');
        sessions.clear();
        await new Promise<void>((r) => wss.close(() => r()));
      },
    };
  },
};
