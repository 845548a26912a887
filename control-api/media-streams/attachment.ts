/**
 * GET /v1.0/calls/{id}/media_stream and /v1.0/conferences/{id}/media_stream: the WebSocket upgrade
 * of a media stream. control-api admits the request (admission.ts), opens the relay to the node
 * that owns the audio (relay-client.ts), answers 101 and then pumps audio: 20 ms PCM chunks from the
 * node encapsulated toward the client, the client's audio back to the node. The stream closes when
 * the call or conference ends (1000), the credential expires or is revoked or the account leaves good
 * standing (1008 and the reason, ws/guard.ts), the client leaves, or control-api stops (1001).
 * Encapsulation twilio (a call's Twilio Media Stream, JSON both ways) is twilio-edge.ts.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Attachment } from '../attachments';
import type { AppContext } from '../context';
import { createSocketGuard, refuseUpgrade, upgradeRequestId, type SocketGuard } from '../ws/guard';
import { guardSocket } from '../../core/net/socket-guard';
import { ApiError } from '../../core/errors';
import { CLOSE_NORMAL, StreamSocket } from '../../core/streams/stream-socket';
import { admit, matchStreamPath, type Admitted } from './admission';
import { connectRelay } from './relay-client';
import { runTwilio } from './twilio-edge';

/** A running stream, as control-api's shutdown sees it. */
export interface Session {
  close(code: number, reason: string): void;
}

/** Joins an accepted client socket and an open relay until either ends. */
function run(a: Admitted, ws: WebSocket, relay: WebSocket, sessions: Set<Session>, ctx: AppContext, guard: SocketGuard): void {
  if (a.encapsulation === 'twilio') return runTwilio(a, ws, relay, sessions, ctx, guard);
  const client = new StreamSocket(ws, { encapsulation: a.encapsulation, streamId: a.id });
  const s: Session = { close: (code, reason) => client.close(code, reason) };
  const untrack = guard.track({ auth: a.auth, expiresAtMs: a.expiresAtMs, close: (code, reason) => client.close(code, reason) });
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
    untrack();
    relay.close(1000, 'client left');
    ctx.logger.info({ target: a.target, id: a.id, encapsulation: a.encapsulation, ...client.stats }, 'media stream closed');
  });
  // the node may have ended the relay while the client's upgrade was being answered
  if (relay.readyState !== relay.OPEN) client.close(CLOSE_NORMAL, 'stream ended');
}

export const attachment: Attachment = {
  name: 'media-streams',
  async start(server: http.Server, ctx: AppContext) {
    const guard = await createSocketGuard(ctx);
    const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
    const sessions = new Set<Session>();
    const pending = new Set<Duplex>();

    const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = matchStreamPath(url.pathname);
      if (!match) return; // another upgrade handler's path
      const requestId = upgradeRequestId(req);
      guardSocket(socket); // before admission: a reset while it runs ends this socket only
      pending.add(socket);
      (async () => {
        const a = await admit(ctx, guard, req, url, match.target, match.rawId);
        const relay = await connectRelay(a.relay, a.target, a.id, a.encapsulation === 'twilio');
        if (socket.destroyed) return void relay.close(1000, 'client left');
        wss.handleUpgrade(req, socket, head, (ws) => run(a, ws, relay, sessions, ctx, guard));
      })().then(
        () => pending.delete(socket),
        (e: unknown) => {
          pending.delete(socket);
          if (!(e instanceof ApiError)) ctx.logger.warn({ err: String(e), path: url.pathname }, 'media stream upgrade failed');
          refuseUpgrade(socket, e, requestId);
        },
      );
    };
    server.on('upgrade', onUpgrade);

    return {
      async close() {
        server.off('upgrade', onUpgrade);
        for (const s of pending) s.destroy();
        for (const s of sessions) s.close(1001, 'server stopping');
        sessions.clear();
        await guard.close();
        await new Promise<void>((r) => wss.close(() => r()));
      },
    };
  },
};
