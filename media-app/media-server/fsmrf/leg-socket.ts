/**
 * A leg's channel socket: the switch's outbound event-socket connection for one channel, which carries
 * everything fsmrf does on it (play, speak, play_and_get_digits, record, uuid_bridge…). drachtio-modesl
 * answers a command when its reply or CHANNEL_EXECUTE_COMPLETE arrives and drops nothing when the socket
 * ends: a play pending when the socket resets (or the switch goes away) would wait for ever. Here the
 * socket's end rejects what is pending, and what is asked after it, with LegSocketClosed.
 */
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { Socket } from 'node:net';

/** An operation on a leg whose channel socket closed before it finished (or before it was asked). */
export class LegSocketClosed extends Error {
  constructor(readonly operation: string) {
    super(`${operation}: the switch's event socket for this leg closed before it finished (a reset, the switch gone, or the channel hung up)`);
    this.name = 'LegSocketClosed';
  }
}

export class LegSocket {
  private closed: boolean;
  /** the rejections of the operations in flight, run once when the socket ends */
  private readonly pending = new Set<() => void>();

  constructor(fs: FsEndpoint) {
    const conn = fs.conn;
    this.closed = !conn;
    // drachtio-modesl writes a command's lines in separate writes: with Nagle the last one waits for the
    // switch's delayed ACK, ~40 ms a command (esl/README.md "Its latency per command")
    if (conn) eslSocket(conn, "the leg's channel connection").setNoDelay(true);
    conn?.on('esl::end', () => {
      this.closed = true;
      for (const reject of [...this.pending]) reject();
      this.pending.clear();
    });
  }

  /** `op` on the channel, rejected with LegSocketClosed when the socket ends first (or already has). */
  run<T>(operation: string, op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new LegSocketClosed(operation));
    return new Promise<T>((resolve, reject) => {
      const lost = () => reject(new LegSocketClosed(operation));
      this.pending.add(lost);
      // a synchronous throw of op() rejects like its promise would, and still leaves `pending`
      Promise.resolve()
        .then(op)
        .then(resolve, reject)
        .finally(() => this.pending.delete(lost));
    });
  }
}

/**
 * drachtio-modesl's socket of a connection (its Connection#socket: an inbound one's, connect.ts, or a
 * leg's channel socket). A connection without one throws, naming `what`: a renamed or missing field
 * would otherwise leave TCP_NODELAY unset (or a socket open) without a word. modesl sets the field to
 * null once the socket closed: pass only a connection that is open (fsmrf drops a leg's at its close).
 */
export function eslSocket(conn: object, what: string): Socket {
  const socket = (conn as { socket?: unknown }).socket;
  if (!(socket instanceof Socket)) throw new Error(`${what}: drachtio-modesl's connection has no socket (its 'socket' field is ${socket === null ? 'null: closed' : 'missing'})`);
  return socket;
}

/** An event of the leg's channel as drachtio-modesl hands it, the part read here. */
export interface ChannelEvent {
  getHeader(name: string): unknown;
}

/** Whether `e` is such an event (what fsmrf's execute resolves with is untyped). */
function isChannelEvent(e: unknown): e is ChannelEvent {
  return !!e && typeof e === 'object' && 'getHeader' in e && typeof e.getHeader === 'function';
}

/** A header of a channel event (the CHANNEL_EXECUTE_COMPLETE fsmrf's execute resolves with): null when absent or not an event. */
export function channelHeader(evt: unknown, name: string): string | null {
  if (!isChannelEvent(evt)) return null;
  const v = evt.getHeader(name);
  return typeof v === 'string' ? v : null;
}

/** drachtio-modesl's channel connection (fsmrf's Endpoint#conn), the part used here. */
interface ChannelConn {
  subscribe(events: string): unknown;
  on(event: string, listener: (evt: ChannelEvent) => void): unknown;
  off(event: string, listener: (evt: ChannelEvent) => void): unknown;
}

/**
 * `fn` for each `name` event (CHANNEL_EXECUTE_COMPLETE, RECORD_STOP…) of the leg's own channel, on its
 * channel connection; `subscribe`: ask the switch for the event first (fsmrf subscribes to some only).
 * Returns what stops listening, or null when the connection is gone (the leg ended).
 */
export function onChannelEvent(fs: FsEndpoint, name: string, fn: (evt: ChannelEvent) => void, o: { subscribe?: boolean } = {}): (() => void) | null {
  const conn = fs.conn as unknown as ChannelConn | null;
  if (!conn) return null;
  if (o.subscribe) conn.subscribe(name);
  const event = `esl::event::${name}::${fs.uuid}`;
  conn.on(event, fn);
  return () => void conn.off(event, fn);
}
