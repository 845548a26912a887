// A raw event-socket client (plain TCP, the server's frames read as they come: a header block, then
// Content-Length bytes of body, nothing interpreted) and an event socket of our switch on a free loopback
// port: the esl tests and the switch rig (switch-rig.ts) share them.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { listenInTurn } from '../ports';
import { EslServer, type EslServerOptions } from '../../esl/server';

export interface ServerFrame {
  headers: Record<string, string>;
  body: string;
  /** the frame's bytes as they came */
  raw: string;
}

export class RawClient {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  private buf = Buffer.alloc(0);
  private readonly frames: ServerFrame[] = [];
  private waiting: ((f: ServerFrame) => void) | null = null;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => this.onData(d));
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** A client on a socket accepted elsewhere (the outbound socket the switch dialled). */
  static wrap(socket: net.Socket): RawClient {
    return new RawClient(socket);
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next frame from the server (rejects after 5 s: a frame that never comes fails the test). */
  next(): Promise<ServerFrame> {
    const f = this.frames.shift();
    if (f) return Promise.resolve(f);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no frame from the server within 5 s')), 5000);
      this.waiting = (x) => {
        clearTimeout(t);
        resolve(x);
      };
    });
  }

  /** Sends a command and returns the next frame (its reply, unless an event came first). */
  async command(text: string): Promise<ServerFrame> {
    this.send(`${text}\n\n`);
    return this.next();
  }

  /** Connects and authenticates; returns the client after `+OK accepted`. */
  static async authed(port: number, password: string): Promise<RawClient> {
    const c = await RawClient.connect(port);
    await c.next(); // auth/request
    const r = await c.command(`auth ${password}`);
    if (r.headers['Reply-Text'] !== '+OK accepted') throw new Error(`auth refused: ${r.raw}`);
    return c;
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf('\n\n');
      if (end < 0) return;
      const head = this.buf.toString('utf8', 0, end);
      const headers: Record<string, string> = {};
      for (const line of head.split('\n')) {
        const i = line.indexOf(': ');
        if (i > 0) headers[line.slice(0, i)] = line.slice(i + 2);
      }
      const len = Number(headers['Content-Length'] ?? 0);
      if (this.buf.length < end + 2 + len) return;
      const raw = this.buf.toString('utf8', 0, end + 2 + len);
      const frame = { headers, body: this.buf.toString('utf8', end + 2, end + 2 + len), raw };
      this.buf = this.buf.subarray(end + 2 + len);
      const w = this.waiting;
      this.waiting = null;
      if (w) w(frame);
      else this.frames.push(frame);
    }
  }
}

/** An authenticated client subscribed to `events` (plain); a reply other than the listener enabled throws. */
export async function subscribed(port: number, password: string, events: string): Promise<RawClient> {
  const c = await RawClient.authed(port, password);
  const reply = (await c.command(`event plain ${events}`)).headers['Reply-Text'];
  if (reply === '+OK event listener enabled plain') return c;
  c.socket.destroy();
  throw new Error(`event plain ${events}: ${reply}`);
}

/** The next event of `c` whose Action is `action` (of member `memberId` when given; others skipped), its headers. */
export async function nextAction(c: RawClient, action: string, memberId?: number): Promise<Record<string, string>> {
  for (;;) {
    const h = plainHeaders((await c.next()).body);
    if (h['Action'] === action && (memberId === undefined || h['Member-ID'] === String(memberId))) return h;
  }
}

/** Plain event text (`name: value` lines) as a map, values URL-decoded. */
export function plainHeaders(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of body.split('\n\n')[0]!.split('\n')) {
    const i = line.indexOf(': ');
    if (i > 0) out[line.slice(0, i)] = decodeURIComponent(line.slice(i + 2));
  }
  return out;
}

export const PASSWORD = 'esl-test-secret';

/** The conference file roots of a test server that does not give its own: a directory no test fills. */
const NO_CONFERENCE_FILES = path.join(os.tmpdir(), `esl-test-no-conference-files-${process.pid}`);

/** An event socket on a free loopback port; close it in after/afterEach. */
export async function startServer(opts: Partial<EslServerOptions> = {}, host = '127.0.0.1'): Promise<{ server: EslServer; port: number }> {
  const server = new EslServer({
    password: PASSWORD,
    profile: { name: 'drachtio_mrf', address: '127.0.0.1:5080' },
    heartbeatMs: 0,
    conferenceFiles: { recordings: NO_CONFERENCE_FILES, sounds: NO_CONFERENCE_FILES },
    ...opts,
  });
  // the listen claims the port (a port found free by a probe was once taken before the listen)
  const port = await listenInTurn((p) => server.listen(p, host), 'the event socket');
  return { server, port };
}
