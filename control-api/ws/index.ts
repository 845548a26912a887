/**
 * WebSocket /v1.0/ws on the control-api HTTP server. Credentials come as the `token` or
 * `accesskey` query parameter (or Authorization header); the client then sends
 * `{"type":"subscribe","topics":[...]}` / `{"type":"unsubscribe","topics":[...]}`. A malformed or
 * unauthorised topic closes the socket with 1008 and the reason. Events arrive as
 * `{event_type, timestamp, topic, data}`. Every copy of control-api reads the whole event stream.
 * The upgrade passes the account status gate, and a socket closes (1008) when its credential is
 * revoked or expires or its account leaves good standing (guard.ts).
 *
 *   const ws = await attachWebSocket(server, ctx);   // after http.createServer(app)
 *   ...; await ws.close();
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import type { Redis } from 'ioredis';
import type { AppContext, AuthContext } from '../context';
import type { Credentials } from '../middleware/credentials';
import { EventSubscriber, eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { Hub, type Connection } from './hub';
import { applySubscriptionFrame, parseSubscriptionFrame, refusal } from './topics';
import { createSocketGuard, refuseUpgrade, upgradeRequestId, type SocketGuard } from './guard';
import { guardSocket } from '../../core/net/socket-guard';
import { startPresenceFeed } from './presence-feed';

export const WS_PATH = '/v1.0/ws';

export interface WebSocketOptions {
  /** Event stream name (tests use their own). */
  stream?: string;
  /** Unsent bytes after which a socket is dropped (default 1 MiB). */
  maxBufferedBytes?: number;
  /** Ping period; a socket that did not answer the previous ping is dropped (default 30 s). */
  pingIntervalMs?: number;
  /** Most topics one socket may hold (default 100). */
  maxTopics?: number;
  credentials?: Credentials;
  /** Period of the revocation backstop pass (default 3000 ms). */
  recheckMs?: number;
}

export interface WebSocketService {
  hub: Hub;
  guard: SocketGuard;
  /** Feed an event directly (the stream reader does this for every event). */
  dispatch(e: PlatformEvent): void;
  close(): Promise<void>;
}

export async function attachWebSocket(server: http.Server, ctx: AppContext, opts: WebSocketOptions = {}): Promise<WebSocketService> {
  const maxTopics = opts.maxTopics ?? 100;
  const hub = new Hub(opts.maxBufferedBytes ?? 1024 * 1024);
  const guard = await createSocketGuard(ctx, { credentials: opts.credentials, recheckMs: opts.recheckMs });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== WS_PATH) return; // another upgrade handler's path
    guardSocket(socket); // before admission: a reset while it runs ends this socket only
    guard.admit(req, url).then(
      (a) => {
        if (socket.destroyed) return;
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, a.auth, a.expiresAtMs));
      },
      (e: unknown) => refuseUpgrade(socket, e, upgradeRequestId(req)),
    );
  };
  server.on('upgrade', onUpgrade);

  function onConnection(socket: WebSocket, auth: AuthContext, expiresAtMs: number | null): void {
    const c: Connection = { socket, auth, topics: new Map(), alive: true };
    hub.add(c);
    const untrack = guard.track({
      auth,
      expiresAtMs,
      close: (code, reason) => {
        hub.remove(c);
        socket.close(code, reason);
      },
    });
    socket.on('pong', () => (c.alive = true));
    socket.on('close', () => {
      hub.remove(c);
      untrack();
    });
    socket.on('error', () => socket.terminate());
    socket.on('message', (raw: RawData, isBinary: boolean) => applySubscriptionFrame(c, parseSubscriptionFrame(raw, isBinary), (t) => refusal(t, c.auth), maxTopics));
  }

  const ping = setInterval(() => pingAll(hub), opts.pingIntervalMs ?? 30_000);
  ping.unref();

  // XREAD BLOCK holds its connection: the reader gets its own.
  const reader: Redis = ctx.redis.duplicate();
  const sub = new EventSubscriber(reader, { stream: opts.stream ?? eventStreamKey(ctx.config.redisKeyPrefix), blockMs: 500 });
  sub.on('event', (e: PlatformEvent) => hub.dispatch(e));
  sub.on('error', (err: unknown) => ctx.logger.warn({ err: String(err) }, 'ws event reader error'));
  await sub.start();
  const stopPresence = await startPresenceFeed(ctx, hub);

  return {
    hub,
    guard,
    dispatch: (e) => hub.dispatch(e),
    async close() {
      server.off('upgrade', onUpgrade);
      clearInterval(ping);
      await stopPresence();
      const stopped = sub.stop(); // ends once its blocking read returns: at once when the reader disconnects below
      await guard.close();
      for (const c of hub.all()) c.socket.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      reader.disconnect();
      await stopped;
    },
  };
}

/** Pings every socket; one that did not answer the last ping is dropped. */
function pingAll(hub: Hub): void {
  for (const c of hub.all()) {
    if (!c.alive) {
      hub.remove(c);
      c.socket.terminate();
      continue;
    }
    c.alive = false;
    c.socket.ping();
  }
}
