/**
 * The node's side of the stream relay (core/streams/relay.ts): a WebSocket server that control-api
 * connects to for each media stream of a call or conference this node owns. It checks the node's
 * secret, opens a tap on the audio and pumps raw PCM both ways until either side ends.
 */
import http from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import { parseRelayPath, RELAY_CLEAR, RELAY_CLOSE, RELAY_READY, RELAY_SECRET_HEADER, relayDtmf, type StreamTarget } from '../../core/streams/relay';
import type { CallSession } from '../call/session';
import { openTap, TapError, type AudioTap } from './taps';
import type { CallDeps } from '../call/deps';
import { guardServer, guardSocket } from '../../core/net/socket-guard';

export interface RelayServerOptions {
  host: string;
  port: number;
  /** Unsent bytes above which chunks toward control-api are dropped. */
  maxBufferedBytes?: number;
}

export class RelayServer {
  readonly secret = randomBytes(24).toString('hex');
  private readonly server = guardServer(http.createServer((_req, res) => res.writeHead(426).end()));
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private readonly open = new Set<{ ws: WebSocket; tap: AudioTap | null }>();

  constructor(
    private readonly deps: Pick<CallDeps, 'calls' | 'media'>,
    private readonly logger: Logger,
    private readonly opts: RelayServerOptions,
  ) {
    this.server.on('upgrade', (req, socket, head) => {
      guardSocket(socket); // guardServer did already; this handler stays safe on any server
      const given = Buffer.from(String(req.headers[RELAY_SECRET_HEADER] ?? ''));
      const want = Buffer.from(this.secret);
      if (given.length !== want.length || !timingSafeEqual(given, want)) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const url = new URL(req.url ?? '/', 'http://x');
      const target = parseRelayPath(url.pathname);
      if (!target) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const inboundOnly = target.target === 'call' && url.searchParams.get('mix') === 'in';
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, target.target, target.id, inboundOnly));
    });
  }

  async listen(): Promise<{ host: string; port: number }> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    const a = this.server.address() as AddressInfo;
    return { host: this.opts.host, port: a.port };
  }

  get size(): number {
    return this.open.size;
  }

  /** `inboundOnly` (a Twilio stream): the caller's audio alone, its digits as text, and `clear` taken. */
  private onConnection(ws: WebSocket, target: StreamTarget, id: string, inboundOnly = false): void {
    const entry: { ws: WebSocket; tap: AudioTap | null } = { ws, tap: null };
    this.open.add(entry);
    const maxBuffered = this.opts.maxBufferedBytes ?? 64 * 1024;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      this.open.delete(entry);
      void entry.tap?.stop();
    };
    ws.on('close', finish);
    ws.on('error', () => ws.terminate());
    const onFrame = (pcm: Buffer) => {
      if (ws.readyState !== ws.OPEN || ws.bufferedAmount > maxBuffered) return;
      ws.send(pcm, { binary: true });
    };
    openTap(this.deps, target, id, onFrame, inboundOnly ? 'in' : 'both').then(
      (tap) => {
        if (closed) return void tap.stop();
        entry.tap = tap;
        // the first text message tells control-api the tap is up: only then does it answer its client
        ws.send(RELAY_READY);
        ws.on('message', (data: RawData, isBinary: boolean) => {
          const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
          if (isBinary) tap.inject(buf);
          else if (inboundOnly && buf.toString() === RELAY_CLEAR) tap.clear();
        });
        if (inboundOnly) this.forwardDigits(ws, id);
        void tap.ended.then((why) => ws.close(RELAY_CLOSE.ended, why));
      },
      (e: unknown) => {
        const code = e instanceof TapError ? RELAY_CLOSE[e.code] : 1011;
        if (!(e instanceof TapError)) this.logger.warn({ err: String(e), target, id }, 'stream tap failed');
        ws.close(code, e instanceof Error ? e.message.slice(0, 120) : 'tap failed');
      },
    );
  }

  private forwardDigits(ws: WebSocket, callId: string): void {
    const call = this.deps.calls.get(callId) as CallSession | undefined;
    if (!call) return;
    const onDigit = (digit: string) => {
      if (ws.readyState === ws.OPEN) ws.send(relayDtmf(digit));
    };
    call.on('dtmf', onDigit);
    ws.once('close', () => call.off('dtmf', onDigit));
  }

  async close(): Promise<void> {
    for (const e of this.open) {
      e.ws.close(RELAY_CLOSE.ended, 'node stopping');
      void e.tap?.stop();
    }
    this.open.clear();
    await new Promise<void>((r) => this.wss.close(() => r()));
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeAllConnections();
  }
}
