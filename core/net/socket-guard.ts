/**
 * Every socket a listener accepts gets its 'error' handler before anything can fail on it: no network
 * input may end a process (docs/reliability.md "A crash is one process"). One guard for every server of
 * the platform (control-api's REST and WebSockets, media-app's stream relay, sip-server's SIP over TCP,
 * TLS and WebSocket, the drachtio port, the /metrics listeners):
 *
 *   const server = guardServer(http.createServer(app));          // before listen()
 *   server.on('upgrade', (req, socket, head) => ...);             // socket already guarded
 *
 * - at 'connection' (and 'secureConnection' for TLS) the socket gets an error handler that lives as long
 *   as the socket: a reset (ECONNRESET, EPIPE) after Node's HTTP parser hands the socket to an 'upgrade'
 *   handler (Node removes its own handler then) ends that one connection, quietly;
 * - HTTP(S) servers: 'upgrade' is guarded first of all its handlers, and an upgrade that nobody finishes
 *   (no handler claims its path, a client that stalls during admission) is destroyed after
 *   `upgradeTimeoutMs` (ws clears the socket's timeout once the WebSocket opens); requests Node's parser
 *   refuses get `clientError` (default: a plain 400, or 431 for oversized headers) and the socket closes;
 *   TLS handshake failures are ignored.
 */
import type http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';

const GUARDED = Symbol.for('openvoice.socket-guard');

/** How long an upgrade request may stay unanswered (admission included) before its socket is destroyed. */
export const DEFAULT_UPGRADE_TIMEOUT_MS = 15_000;

/** Gives `socket` its lasting error handler (once; later calls do nothing). An error ends that socket only. */
export function guardSocket(socket: Duplex): void {
  const s = socket as Duplex & { [GUARDED]?: true };
  if (s[GUARDED]) return;
  s[GUARDED] = true;
  socket.on('error', () => socket.destroy());
}

/** A bare answer to a request Node's HTTP parser refused, then the socket closes (never throws). */
export function plainClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const answerable = socket.writable && !(socket as { _httpMessage?: unknown })._httpMessage && err.code !== 'ECONNRESET' && err.code !== 'EPIPE';
  if (!answerable) return void socket.destroy();
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  socket.end(`HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}

export interface GuardOptions {
  /** Answers a request Node's HTTP parser refused (HTTP servers; default plainClientError). */
  clientError?: (err: NodeJS.ErrnoException, socket: Duplex) => void;
  /** An upgrade not turned into a WebSocket (or answered) by then is destroyed (default 15 s). */
  upgradeTimeoutMs?: number;
}

function isHttpServer(server: net.Server): server is http.Server {
  return typeof (server as Partial<http.Server>).setTimeout === 'function' && 'headersTimeout' in server;
}

/** Guards every socket `server` accepts (net, tls, http or https); returns the server. Call before listen(). */
export function guardServer<S extends net.Server>(server: S, opts: GuardOptions = {}): S {
  server.on('connection', guardSocket);
  if ('addContext' in server) {
    // tls.Server / https.Server: the TLS socket is a socket of its own; a failed handshake is the client's
    server.on('secureConnection', guardSocket);
    server.on('tlsClientError', () => undefined);
  }
  if (!isHttpServer(server)) return server;
  const upgradeTimeoutMs = opts.upgradeTimeoutMs ?? DEFAULT_UPGRADE_TIMEOUT_MS;
  server.prependListener('upgrade', (_req: http.IncomingMessage, socket: Duplex) => {
    guardSocket(socket);
    const s = socket as net.Socket;
    if (typeof s.setTimeout === 'function') s.setTimeout(upgradeTimeoutMs, () => s.destroy());
  });
  server.on('clientError', opts.clientError ?? plainClientError);
  return server;
}
