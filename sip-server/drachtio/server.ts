/**
 * The drachtio protocol endpoint: accepts application connections (inbound mode), checks the
 * shared secret, keeps the route table, answers pings, and passes `sip` / `proxy` messages to the
 * SIP side (a DrachtioHandler). In outbound mode (see outbound.ts) connections are dialled by us
 * but handled the same way once the application has authenticated.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { AppConnection } from './app-connection';
import { AppRegistry } from './app-registry';
import { responseNo, responseOk, type ClientMessage } from './protocol';
import { guardServer } from '../../core/net/socket-guard';

export const DRACHTIO_VERSION = 'v0.9.4-ts';

export interface DrachtioHandler {
  /** `sip|...` from an application: a new request, an in-dialog request, a response, a CANCEL. */
  onSip(conn: AppConnection, msg: ClientMessage): void;
  /** `proxy|...` from an application. */
  onProxy(conn: AppConnection, msg: ClientMessage): void;
  /** an application went away (its dialogs stay; in-dialog requests then get 481 or go to another app). */
  onDisconnect(conn: AppConnection): void;
  /** "host:port" list reported at authentication: the SIP contact points (e.g. `udp/127.0.0.1:5060`). */
  hostports(): { public: string[]; local: string[] };
}

export interface DrachtioServerOptions {
  secret: string;
  /** time an application has to authenticate after connecting */
  authTimeoutMs?: number;
}

export interface DrachtioServerEvents {
  authenticated: [AppConnection];
  disconnected: [AppConnection];
  /** authentication failed or protocol violated; the connection was closed */
  rejected: [AppConnection, string];
  listening: [];
}

export class DrachtioServer extends EventEmitter<DrachtioServerEvents> {
  readonly registry = new AppRegistry();
  readonly connections = new Set<AppConnection>();
  private server?: net.Server;
  private readonly secret: Buffer;

  constructor(
    private readonly opts: DrachtioServerOptions,
    private handler?: DrachtioHandler,
  ) {
    super();
    this.secret = Buffer.from(opts.secret, 'utf8');
  }

  setHandler(handler: DrachtioHandler): void {
    this.handler = handler;
  }

  listen(port: number, host = '127.0.0.1'): Promise<net.AddressInfo> {
    const server = guardServer(net.createServer((socket) => this.adopt(new AppConnection(socket))));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        this.emit('listening');
        resolve(server.address() as net.AddressInfo);
      });
    });
  }

  address(): net.AddressInfo | undefined {
    return (this.server?.address() as net.AddressInfo | null) ?? undefined;
  }

  /** Take charge of a connection (accepted here, or dialled by the outbound connector). */
  adopt(conn: AppConnection): void {
    this.connections.add(conn);
    const timer = setTimeout(() => {
      if (!conn.authenticated) this.reject(conn, 'authentication timeout');
    }, this.opts.authTimeoutMs ?? 5000);
    timer.unref();
    conn.on('message', (m) => {
      try {
        this.onMessage(conn, m);
      } catch (err) {
        // a bug handling one application message must not take the process down
        conn.send(responseNo(m.id, `Server error: ${(err as Error).message}`));
      }
    });
    conn.on('violation', (err) => this.emit('rejected', conn, err.message));
    conn.once('close', () => {
      clearTimeout(timer);
      this.connections.delete(conn);
      this.registry.removeAllFor(conn);
      if (conn.authenticated) {
        this.handler?.onDisconnect(conn);
        this.emit('disconnected', conn);
      }
    });
  }

  async close(): Promise<void> {
    for (const c of [...this.connections]) c.close();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private reject(conn: AppConnection, reason: string): void {
    this.emit('rejected', conn, reason);
    conn.close();
  }

  private checkSecret(given: string): boolean {
    const b = Buffer.from(given, 'utf8');
    return b.length === this.secret.length && timingSafeEqual(b, this.secret);
  }

  private onMessage(conn: AppConnection, m: ClientMessage): void {
    if (!m.id || !m.type) {
      conn.send(responseNo(m.id, 'Invalid message format'));
      return this.reject(conn, 'invalid message format');
    }
    if (m.type === 'authenticate') {
      if (!this.checkSecret(m.tokens[2] ?? '')) {
        conn.send(responseNo(m.id, 'incorrect secret'));
        return this.reject(conn, 'incorrect secret');
      }
      for (const t of (m.tokens[3] ?? '').split(',')) if (t) conn.tags.add(t);
      conn.authenticated = true;
      const hp = this.handler?.hostports() ?? { public: [], local: [] };
      conn.send(responseOk(m.id, hp.public.join(','), DRACHTIO_VERSION, hp.local.join(',')));
      this.emit('authenticated', conn);
      return;
    }
    if (!conn.authenticated) {
      conn.send(responseNo(m.id, 'not authenticated'));
      return this.reject(conn, `${m.type} before authenticate`);
    }
    switch (m.type) {
      case 'ping':
        conn.send(responseOk(m.id, 'pong'));
        return;
      case 'route':
      case 'remove_route': {
        const method = m.tokens[2];
        if (!method || !/^[A-Za-z:_-]+$/.test(method)) {
          conn.send(responseNo(m.id, 'Route request includes unsupported verb'));
          return this.reject(conn, `bad route verb ${method}`);
        }
        if (m.type === 'route') this.registry.add(conn, method);
        else this.registry.remove(conn, method);
        conn.send(responseOk(m.id));
        return;
      }
      case 'sip':
        if (m.tokens.length < 4) {
          conn.send(responseNo(m.id, 'Invalid message format'));
          return;
        }
        if (!this.handler) return void conn.send(responseNo(m.id, 'SIP stack not ready'));
        this.handler.onSip(conn, m);
        return;
      case 'proxy':
        if (m.tokens.length < 10) {
          conn.send(responseNo(m.id, 'Invalid proxy request: not enough information provided'));
          return;
        }
        if (!this.handler) return void conn.send(responseNo(m.id, 'SIP stack not ready'));
        this.handler.onProxy(conn, m);
        return;
      default:
        conn.send(responseNo(m.id, 'Unknown message type'));
        this.reject(conn, `unknown message type ${m.type}`);
    }
  }
}
