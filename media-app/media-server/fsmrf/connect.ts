/**
 * Connecting drachtio-fsmrf to a switch's event socket, within a deadline (README.md beside, "Connecting").
 *
 * This is Mrf#connect (drachtio-fsmrf lib/mrf.js) with what it lacks: it has no deadline (a blackholed
 * switch waits for the TCP timeout, one that accepts and never speaks waits for ever), never settles on a
 * refused password (drachtio-modesl reports `auth::fail`, fsmrf does not listen), leaves modesl's
 * reconnect loop running after a failure (it has no handle to stop it), and debug-logs the password.
 * So the connection is made here with the library's own drachtio-modesl and MediaServer (both unmodified,
 * loaded from fsmrf's own directory so they are the copies it uses), and on any failure or at the
 * deadline the connection is closed (modesl's `closing`: no reconnect) before the promise rejects.
 */
import { createRequire } from 'node:module';
import net, { type Socket } from 'node:net';
import Mrf, { type MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import { guardServer } from '../../../core/net/socket-guard';
import { eslSocket } from './leg-socket';
import type { LinkTimers } from './switch-link';

/** drachtio-modesl's inbound Connection, the part used here (an EventEmitter2: `esl::…` event names). */
interface EslInbound {
  /** null once closed */
  socket: Socket | null;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  listeners(event: string): unknown[];
  /** drachtio-modesl's reconnect settings (`maxAttempts` 1: it never reconnects; the backend does, switch-link.ts) */
  reconnectOpts: { maxAttempts?: number };
  /** an `api` command; the reply's body by getBody() */
  api(command: string, cb: (res: { getBody(): string }) => void): unknown;
  disconnect(): void;
}

/** (host, port, password, ready) or (host, port, password, localAddress, ready): localAddress is the connection's source */
type EslConnectionCtor = {
  new (host: string, port: number, password: string, ready: () => void): EslInbound;
  new (host: string, port: number, password: string, localAddress: string, ready: () => void): EslInbound;
};
/** lib/mediaserver.js: (conn, mrf, listenAddress, listenPort, advertisedAddress, advertisedPort, profile) */
type MediaServerCtor = new (
  conn: EslInbound,
  mrf: Mrf,
  listenAddress: string,
  listenPort: number,
  advertisedAddress: string | undefined,
  advertisedPort: number | undefined,
  profile: string,
) => FsMediaServer;

const fromFsmrf = createRequire(require.resolve('drachtio-fsmrf'));
const { Connection } = fromFsmrf('drachtio-modesl') as { Connection: EslConnectionCtor };
const MediaServer = fromFsmrf('./mediaserver') as MediaServerCtor;

/** The SIP profile fsmrf sends its INVITEs to (`sofia status` names its address). */
const PROFILE = 'drachtio_mrf';

/**
 * The event-socket connect's limit by default (MEDIA_SERVER_CONNECT_TIMEOUT_MS, kit/config.ts): the
 * connect phase (TCP, auth, the outbound-socket listener, `sofia status`) at start-up and at each
 * reconnect (switch-link.ts), armed on the link's timers. It bounds no leg: legs are made only on a link
 * that is up, and the link's loss ends every leg first, each on its own end's deadline (leg-end.ts
 * LEG_END_MS, 4 s), which closes what the leg holds (its dialog forgotten, its channel socket closed)
 * whether or not a reconnect is in flight. So this limit may be longer than the leg's end: a reconnect
 * that takes it leaves no leg's socket behind (test/media-app/media-server/fsmrf-server-lost.test.ts).
 * The legs' own connects are the switch's (its outbound socket to fsmrf's server: fsmrf's createEndpoint
 * waits 4 s for it, esl/sip-face.ts OUTBOUND_CONNECT_MS the same).
 */
export const SWITCH_CONNECT_MS = 5000;

export interface SwitchAddress {
  host: string;
  port: number;
  password: string;
}

export interface ConnectOptions {
  /** how long the whole connect may take: TCP, auth, the outbound-socket listener, `sofia status` (MEDIA_SERVER_CONNECT_TIMEOUT_MS) */
  timeoutMs: number;
  /** where fsmrf's outbound-socket server listens (the switch connects back there for each channel) */
  listenAddress: string;
  /** its port (0 or absent: any free one) */
  listenPort?: number;
  /** what the switch is told to dial (X-esl-outbound); absent: the listen address, a port of 0: the listen port */
  advertise?: { host: string; port: number };
  /**
   * the event-socket connection's source address (absent: the kernel's choice): the listen address when
   * MEDIA_SERVER gave one, so the switch sees one address for both (its event-socket ACL's, and the
   * one our esl/ switch requires an outbound socket to go to: esl/sip-face.ts)
   */
  localAddress?: string;
  /** where the connect's deadline is armed: the link's timers (switch-link.ts; tests pass virtual ones), default the process's */
  timers?: LinkTimers;
}

const PROCESS_TIMERS: LinkTimers = { set: (ms, fn) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as NodeJS.Timeout) };

/** Why connecting to the switch failed: never the password (the message names the address and the cause). */
export class SwitchConnectError extends Error {
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`event socket ${address}: ${reason}`);
    this.name = 'SwitchConnectError';
  }
}

/** fsmrf's MediaServer on the switch at `to`, ready (it answered `sofia status`), or a SwitchConnectError. */
export function connectSwitch(srf: unknown, to: SwitchAddress, opts: ConnectOptions): Promise<FsMediaServer> {
  const where = `${to.host.includes(':') ? `[${to.host}]` : to.host}:${to.port}`;
  return new Promise<FsMediaServer>((resolve, reject) => {
    let settled = false;
    let ms: FsMediaServer | null = null;
    const timers = opts.timers ?? PROCESS_TIMERS;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      timers.clear(deadline);
      close();
      reject(new SwitchConnectError(where, reason));
    };
    const close = () => {
      // disconnect() sets modesl's `closing` (no reconnect) and ends the socket; a switch that never
      // answers would hold a half-closed socket open, so it is destroyed too. Once MediaServer has its
      // outbound-socket server it owns both (before that, its own 1 s readiness timer closes the server).
      const socket = conn.socket;
      if (ms && (ms as unknown as { _server?: unknown })._server) ms.disconnect();
      else conn.disconnect();
      socket?.destroy();
    };
    const ready = () => {
      if (settled) return;
      // fsmrf's MediaServer throws inside the reply's callback when the profile is missing (an uncaught
      // exception: a misconfigured switch would end media-app): asked here first, refused as a connect failure
      conn.api('sofia status', (res) => {
        if (settled) return;
        if (!profileAddress(res.getBody())) return fail(`the switch has no ${PROFILE} SIP profile with an IPv4 address (sofia status)`);
        void canListen(opts.listenAddress, opts.listenPort ?? 0).then((problem) => (problem ? fail(problem) : start()));
      });
    };
    // a connection that cannot even be made (a bad local address) fails the connect before its timer is armed
    let conn: EslInbound;
    try {
      conn = opts.localAddress ? new Connection(to.host, to.port, to.password, opts.localAddress, ready) : new Connection(to.host, to.port, to.password, ready);
    } catch (err) {
      settled = true;
      reject(new SwitchConnectError(where, errorText(err)));
      return;
    }
    // the connect phase owns this timer: cleared when it settles either way
    const deadline = timers.set(opts.timeoutMs, () => fail(`no ready answer within ${opts.timeoutMs} ms`));
    const start = () => {
      if (settled) return;
      const adv = opts.advertise;
      ms = new MediaServer(conn, new Mrf(srf), opts.listenAddress, opts.listenPort ?? 0, adv?.host, adv?.port || undefined, PROFILE);
      ms.once('ready', () => {
        if (settled) return;
        settled = true;
        timers.clear(deadline);
        // the connect phase ends here: its listeners go with it (what follows is switch-link.ts's)
        detach();
        resolve(ms!);
      });
      ms.on('error', onMsError);
    };
    const onMsError = (err: unknown) => fail(`the switch did not get ready: ${errorText(err)}`);
    const unwatch = watchConnecting(conn, fail);
    const detach = () => {
      unwatch();
      ms?.off('error', onMsError);
    };
    // drachtio-modesl writes a command's lines in separate writes: with Nagle the last one waits for the
    // switch's delayed ACK, ~40 ms an `api` (esl/README.md "Its latency per command"); the legs' sockets:
    // leg-socket.ts. A connection without its socket (modesl's field renamed) fails the connect by name.
    try {
      eslSocket(conn, 'the event-socket connection').setNoDelay(true);
    } catch (err) {
      fail(errorText(err));
    }
  });
}

/**
 * The connection's failures while it connects, each a reason for `fail`; returns what removes them (the
 * connect phase's listeners: what follows is switch-link.ts's). modesl's own reconnect (a growing delay, no
 * cap, a retry timer disconnect() does not cancel) is off: a connection lost after start-up is reconnected
 * by switch-link.ts, on a timer it owns.
 */
function watchConnecting(conn: EslInbound, fail: (reason: string) => void): () => void {
  const onError = (err: unknown) => fail(errorText(err));
  const onAuthFail = () => fail('the switch refused the password');
  const onRude = () => fail('the switch refused this address (its ACL, or too many refused passwords)');
  const onEnd = () => fail('the switch closed the connection before it was ready');
  conn.reconnectOpts.maxAttempts = 1;
  conn.on('error', onError);
  conn.on('esl::event::auth::fail', onAuthFail);
  conn.on('esl::event::raw::text/rude-rejection', onRude);
  conn.on('esl::end', onEnd);
  return () => {
    conn.off('error', onError);
    conn.off('esl::event::auth::fail', onAuthFail);
    conn.off('esl::event::raw::text/rude-rejection', onRude);
    conn.off('esl::end', onEnd);
  };
}

/**
 * Whether fsmrf's outbound-socket server can listen there: fsmrf listens with no error handler, so an
 * address not of this host (EADDRNOTAVAIL) or a fixed port in use would be an uncaught error ending
 * media-app. Asked first with a listener of our own, closed at once (a port taken in the moment between
 * is still fsmrf's to fail on); the problem, or null.
 */
function canListen(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    // nothing is served: a connection in the moment it listens is closed at once (close() waits for none)
    const probe = guardServer(net.createServer((s) => s.destroy()));
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    probe.once('error', (err) => resolve(`the outbound-socket listener cannot listen on ${where}: ${errorText(err)}`));
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
}

/** The profile's SIP address in `sofia status` as fsmrf's MediaServer reads it (lib/mediaserver.js), or null. */
export function profileAddress(status: string): string | null {
  return new RegExp(`^\\s*${PROFILE}\\s.*sip:mod_sofia@((?:[0-9]{1,3}\\.){3}[0-9]{1,3}:\\d+)`, 'm').exec(status)?.[1] ?? null;
}

/** An error's message, or its code: what node or the library said, which never holds the password. */
function errorText(err: unknown): string {
  if (err instanceof Error) return (err as NodeJS.ErrnoException).code ? `${(err as NodeJS.ErrnoException).code}: ${err.message}` : err.message;
  return String(err);
}
