// SIP over WebSocket (RFC 7118): an HTTP(S) server that upgrades only handshakes offering the "sip"
// subprotocol, one SIP message per frame, and connections only the peer opens: a request to a
// WebSocket client goes back over the connection its REGISTER or INVITE came on (§5), never a new
// one (browsers do not listen). Keepalives: RFC 5626 CRLF CRLF answered with CRLF, WebSocket pings
// with a bound on the pong.
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { EventEmitter } from 'node:events';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import type { SourceInfo } from '../message';
import type { OriginCheck } from '../../core/sip/ws-origin';
import type { TransportEvents } from './events';
import { guardServer, guardSocket } from '../../core/net/socket-guard';

type Kind = 'ws' | 'wss';

/** A request named a WebSocket flow that is not (or no longer) open: answered 430 Flow Failed (RFC 5626 §5.3). */
export class FlowFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlowFailedError';
  }
}

/** The subprotocol RFC 7118 registers; a handshake without it is refused. */
export const SIP_SUBPROTOCOL = 'sip';

interface WsConnection {
  id: string;
  socket: WebSocket;
  src: SourceInfo;
  /** a pong (or any frame) arrived since the last ping */
  alive: boolean;
}

export interface WsTransportOptions {
  kind: Kind;
  host: string;
  port: number;
  /** largest frame accepted (larger ones close the connection with 1009) */
  maxMessageSize: number;
  pingIntervalMs: number;
  /** open connections one remote address may hold */
  maxPerAddress: number;
  /** addresses the bound does not apply to (the allow-list) */
  uncapped?: (address: string) => boolean;
  tls?: { cert: Buffer; key: Buffer };
  /** Which handshakes' Origin may open a connection (core/sip/ws-origin.ts); default every one. */
  originAllowed?: OriginCheck;
}

/** Offered subprotocols of a handshake (Sec-WebSocket-Protocol, comma separated, maybe repeated). */
function offered(req: http.IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  return (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Refuse a handshake on the raw socket with a short plain-text reason. */
function refuse(socket: net.Socket, status: number, reason: string, text: string): void {
  const body = `${text}\n`;
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export interface WsTransportEvents extends TransportEvents {
  /** a handshake refused by its Origin header (absent: undefined), from `address` */
  'origin-refused': [origin: string | undefined, address: string];
  /** a connection ended */
  close: [src: SourceInfo];
}

/** Events: WsTransportEvents ('message', 'frame-error', 'error', 'origin-refused', 'close'). */
export class WsTransport extends EventEmitter<WsTransportEvents> {
  private server?: http.Server;
  private wss?: WebSocketServer;
  private readonly byId = new Map<string, WsConnection>();
  private readonly byRemote = new Map<string, WsConnection>();
  private readonly perAddress = new Map<string, number>();
  private seq = 0;
  private pingTimer?: NodeJS.Timeout;
  boundPort = 0;

  constructor(private readonly opts: WsTransportOptions) {
    super();
  }

  get connectionCount(): number {
    return this.byId.size;
  }

  async listen(): Promise<void> {
    const plain = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
      res.writeHead(426, { 'Content-Type': 'text/plain', Upgrade: 'websocket', Connection: 'close' });
      res.end('SIP over WebSocket: upgrade with the "sip" subprotocol\n');
    };
    const server = this.opts.kind === 'wss' ? https.createServer({ cert: this.opts.tls!.cert, key: this.opts.tls!.key }, plain) : http.createServer(plain);
    server.headersTimeout = 10_000;
    server.requestTimeout = 15_000;
    // every socket guarded from its first byte; handshake failures (plain text to the wss port, scanners)
    // and requests the HTTP parser refuses close that connection and nothing else
    guardServer(server, { clientError: (_e, socket) => socket.destroy() });
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.opts.maxMessageSize,
      perMessageDeflate: false,
      handleProtocols: (set) => (set.has(SIP_SUBPROTOCOL) ? SIP_SUBPROTOCOL : false),
    });
    this.wss.on('error', (e) => this.emit('error', e));
    server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => this.upgrade(req, socket, head));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => this.emit('error', e));
    this.boundPort = (server.address() as net.AddressInfo).port;
    this.pingTimer = setInterval(() => this.ping(), this.opts.pingIntervalMs);
    this.pingTimer.unref();
  }

  private upgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    guardSocket(socket);
    const origin = req.headers.origin;
    if (this.opts.originAllowed && !this.opts.originAllowed(origin)) {
      // a page of another site: refused before the WebSocket opens (SIP_WS_ALLOWED_ORIGINS)
      this.emit('origin-refused', origin, socket.remoteAddress ?? '');
      refuse(socket, 403, 'Forbidden', "this page's origin may not use SIP over WebSocket here (SIP_WS_ALLOWED_ORIGINS)");
      return;
    }
    if (!offered(req).includes(SIP_SUBPROTOCOL)) {
      refuse(socket, 400, 'Bad Request', 'SIP over WebSocket needs the "sip" subprotocol (Sec-WebSocket-Protocol: sip)');
      return;
    }
    const address = socket.remoteAddress ?? '';
    if ((this.perAddress.get(address) ?? 0) >= this.opts.maxPerAddress && !this.opts.uncapped?.(address)) {
      refuse(socket, 503, 'Service Unavailable', 'too many connections from this address');
      return;
    }
    this.wss!.handleUpgrade(req, socket, head, (ws) => this.adopt(ws, socket));
  }

  private adopt(ws: WebSocket, socket: net.Socket): void {
    const id = `${this.opts.kind}-${++this.seq}`;
    const src: SourceInfo = {
      transport: this.opts.kind,
      address: socket.remoteAddress ?? '',
      port: socket.remotePort ?? 0,
      localAddress: socket.localAddress ?? '',
      localPort: socket.localPort ?? 0,
      connectionId: id,
    };
    const conn: WsConnection = { id, socket: ws, src, alive: true };
    const key = `${src.address}:${src.port}`;
    this.byId.set(id, conn);
    this.byRemote.set(key, conn);
    this.perAddress.set(src.address, (this.perAddress.get(src.address) ?? 0) + 1);
    ws.on('message', (data: RawData) => {
      conn.alive = true;
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      if (isKeepalive(buf)) {
        // RFC 5626 §4.4.1: a CRLF CRLF ping gets a CRLF pong; a lone CRLF is a pong
        if (buf.length === 4 && ws.readyState === WebSocket.OPEN) ws.send('\r\n');
        return;
      }
      this.emit('message', buf, src);
    });
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('error', (e: Error) => {
      // oversize frames (1009), bad frames (1002): ws closes the connection; say why once
      this.emit('frame-error', e.message, src);
    });
    ws.on('close', () => {
      this.byId.delete(id);
      if (this.byRemote.get(key) === conn) this.byRemote.delete(key);
      const n = (this.perAddress.get(src.address) ?? 1) - 1;
      if (n > 0) this.perAddress.set(src.address, n);
      else this.perAddress.delete(src.address);
      this.emit('close', src);
    });
  }

  private ping(): void {
    for (const c of this.byId.values()) {
      if (!c.alive) {
        c.socket.terminate();
        continue;
      }
      c.alive = false;
      try {
        c.socket.ping();
      } catch {
        c.socket.terminate();
      }
    }
  }

  /** Send on the named connection, else on the one from address:port; never opens one. */
  send(data: Buffer, address: string, port: number, connectionId?: string): Promise<void> {
    let conn = connectionId ? this.byId.get(connectionId) : undefined;
    if (!conn || conn.socket.readyState !== WebSocket.OPEN) conn = this.byRemote.get(`${unbracket(address)}:${port}`);
    if (!conn || conn.socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new FlowFailedError(`no open ${this.opts.kind} connection from ${address}:${port}`));
    }
    const ws = conn.socket;
    return new Promise<void>((resolve, reject) => {
      ws.send(data.toString('utf8'), (err) => (err ? reject(new FlowFailedError(err.message)) : resolve()));
    });
  }

  /** True while a connection from address:port is open. */
  isOpen(address: string, port: number): boolean {
    return this.byRemote.get(`${unbracket(address)}:${port}`)?.socket.readyState === WebSocket.OPEN;
  }

  async close(): Promise<void> {
    if (this.pingTimer) clearInterval(this.pingTimer);
    for (const c of this.byId.values()) c.socket.terminate();
    this.wss?.close();
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  }
}

function isKeepalive(buf: Buffer): boolean {
  if (buf.length !== 2 && buf.length !== 4) return false;
  for (const b of buf) if (b !== 0x0d && b !== 0x0a) return false;
  return buf.toString() === '\r\n' || buf.toString() === '\r\n\r\n';
}

function unbracket(host: string): string {
  return host.startsWith('[') ? host.slice(1, -1) : host;
}
