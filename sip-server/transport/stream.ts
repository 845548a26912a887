// TCP and TLS: listening servers, framed connections, reuse keyed by remote address:port.
import net from 'node:net';
import tls from 'node:tls';
import { EventEmitter } from 'node:events';
import { StreamFramer } from '../message/framer';
import type { SourceInfo } from '../message';
import type { TransportEvents } from './events';
import { guardServer } from '../../core/net/socket-guard';

type Kind = 'tcp' | 'tls';

/** One TCP/TLS connection with its framer. */
export class StreamConnection {
  readonly framer: StreamFramer;
  lastUsed = Date.now();
  /**
   * What keeps it open however long it is idle: a key per holder (a dialog, the registrations made
   * over it) and until when (epoch ms; Infinity until unpinned). Gone with the connection.
   */
  readonly pins = new Map<string, number>();

  constructor(
    readonly id: string,
    readonly kind: Kind,
    readonly socket: net.Socket,
    maxMessageSize: number,
  ) {
    this.framer = new StreamFramer(maxMessageSize);
  }

  /** What a message from it reports as its source. */
  get source(): SourceInfo {
    const s = this.socket;
    return { transport: this.kind, address: s.remoteAddress ?? '', port: s.remotePort ?? 0, localAddress: s.localAddress ?? '', localPort: s.localPort ?? 0, connectionId: this.id };
  }

  get remoteKey(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  /** A pin still holds it at `now` (the lapsed ones met on the way are dropped). */
  pinned(now: number): boolean {
    for (const [key, until] of this.pins) {
      if (until > now) return true;
      this.pins.delete(key);
    }
    return false;
  }
}

export interface StreamTransportOptions {
  kind: Kind;
  host: string;
  port: number;
  maxMessageSize: number;
  idleTimeoutMs: number;
  /** open connections one remote address may hold; accepted ones over it are closed at once */
  maxPerAddress?: number;
  uncapped?: (address: string) => boolean;
  tls?: { cert: Buffer; key: Buffer };
}

export interface StreamTransportEvents extends TransportEvents {
  /** a connection opened (accepted or ours) */
  connection: [conn: StreamConnection];
  /** a connection ended */
  close: [conn: StreamConnection];
}

/** Events: StreamTransportEvents ('message', 'frame-error', 'error', 'connection', 'close'). */
export class StreamTransport extends EventEmitter<StreamTransportEvents> {
  private server?: net.Server;
  private readonly byId = new Map<string, StreamConnection>();
  private readonly byRemote = new Map<string, StreamConnection>();
  private readonly connecting = new Map<string, Promise<StreamConnection>>();
  private readonly perAddress = new Map<string, number>();
  private seq = 0;
  private idleTimer?: NodeJS.Timeout;
  boundPort = 0;

  constructor(private readonly opts: StreamTransportOptions) {
    super();
  }

  async listen(): Promise<void> {
    const onConn = (socket: net.Socket): void => {
      const n = this.perAddress.get(socket.remoteAddress ?? '') ?? 0;
      if (this.opts.maxPerAddress !== undefined && n >= this.opts.maxPerAddress && !this.opts.uncapped?.(socket.remoteAddress ?? '')) {
        socket.destroy();
        return;
      }
      this.adopt(socket);
    };
    this.server = this.opts.kind === 'tls' ? tls.createServer({ cert: this.opts.tls!.cert, key: this.opts.tls!.key }, onConn) : net.createServer(onConn);
    this.server.on('error', (e) => this.emit('error', e));
    // every socket guarded at accept; TLS handshake failures (scanners speaking plain text to 5061) ignored
    guardServer(this.server);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.opts.port, this.opts.host, () => {
        this.server!.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (this.server.address() as net.AddressInfo).port;
    this.idleTimer = setInterval(() => this.closeIdle(), Math.min(this.opts.idleTimeoutMs, 30_000));
    this.idleTimer.unref();
  }

  get connectionCount(): number {
    return this.byId.size;
  }

  private adopt(socket: net.Socket): StreamConnection {
    const id = `${this.opts.kind}-${++this.seq}`;
    const conn = new StreamConnection(id, this.opts.kind, socket, this.opts.maxMessageSize);
    socket.setNoDelay(true);
    this.byId.set(id, conn);
    this.byRemote.set(conn.remoteKey, conn);
    const address = socket.remoteAddress ?? '';
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    const src = (): SourceInfo => conn.source;
    socket.on('data', (chunk: Buffer) => {
      conn.lastUsed = Date.now();
      for (const ev of conn.framer.push(chunk)) {
        if (ev.type === 'message') this.emit('message', ev.data, src());
        else if (ev.type === 'keepalive') {
          if (ev.ping && !socket.destroyed) socket.write('\r\n');
        } else {
          this.emit('frame-error', ev.reason, src());
          socket.destroy();
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.byId.delete(id);
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
      if (this.byRemote.get(conn.remoteKey) === conn) this.byRemote.delete(conn.remoteKey);
      this.emit('close', conn);
    });
    this.emit('connection', conn);
    return conn;
  }

  /** Send on the given connection if still open, else on one to address:port (opened when needed). */
  async send(data: Buffer, address: string, port: number, connectionId?: string): Promise<void> {
    let conn = connectionId ? this.byId.get(connectionId) : undefined;
    if (!conn || conn.socket.destroyed) conn = this.byRemote.get(`${address}:${port}`);
    if (!conn || conn.socket.destroyed) conn = await this.connect(address, port);
    conn.lastUsed = Date.now();
    await new Promise<void>((resolve, reject) => {
      conn!.socket.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  private connect(address: string, port: number): Promise<StreamConnection> {
    const key = `${address}:${port}`;
    const pending = this.connecting.get(key);
    if (pending) return pending;
    const p = new Promise<StreamConnection>((resolve, reject) => {
      const socket =
        this.opts.kind === 'tls' ? tls.connect({ host: address, port, rejectUnauthorized: false, servername: net.isIP(address) ? undefined : address }) : net.connect({ host: address, port });
      const ready = this.opts.kind === 'tls' ? 'secureConnect' : 'connect';
      const timer = setTimeout(() => socket.destroy(new Error(`connect timeout to ${key}`)), 10_000);
      socket.once(ready, () => {
        clearTimeout(timer);
        resolve(this.adopt(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    this.connecting.set(key, p);
    p.finally(() => this.connecting.delete(key)).catch(() => undefined);
    return p;
  }

  /** Keep connection `id` open, however idle, until `until` (epoch ms) or unpin(id, key); no-op once it is gone. */
  pin(id: string, key: string, until = Infinity): void {
    this.byId.get(id)?.pins.set(key, until);
  }

  unpin(id: string, key: string): void {
    this.byId.get(id)?.pins.delete(key);
  }

  /** Close what has been idle for idleTimeoutMs and carries nothing pinned (a live dialog, a registration). */
  private closeIdle(): void {
    const now = Date.now();
    const limit = now - this.opts.idleTimeoutMs;
    for (const c of this.byId.values()) if (c.lastUsed < limit && !c.pinned(now)) c.socket.destroy();
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    for (const c of this.byId.values()) c.socket.destroy();
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
  }
}
