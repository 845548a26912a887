// What the audio fork tests share: the custom events fsmrf hands an Endpoint, and a WebSocket server
// on loopback that keeps what each connection sent.
import type { IncomingMessage } from 'node:http';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import WebSocket, { WebSocketServer } from 'ws';

/** The custom events fsmrf hands the Endpoint, in order, each awaitable. */
export class Heard {
  readonly got: { name: string; body: unknown }[] = [];
  private waiters: { name: string; resolve: (b: unknown) => void }[] = [];

  constructor(ep: FsEndpoint, names: string[]) {
    for (const name of names)
      ep.addCustomEventListener(name, (body: unknown) => {
        this.got.push({ name, body });
        for (const w of this.waiters.filter((x) => x.name === name)) w.resolve(body);
        this.waiters = this.waiters.filter((x) => x.name !== name);
      });
  }

  names(): string[] {
    return this.got.map((g) => g.name);
  }

  /** The next (or an already heard, not yet taken) event `name`; fails the test after 5 s. */
  next(name: string): Promise<unknown> {
    const i = this.got.findIndex((g) => g.name === name);
    if (i >= 0) return Promise.resolve(this.got.splice(i, 1)[0]!.body);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${name} within 5 s (heard: ${this.names().join(', ')})`)), 5000);
      this.waiters.push({
        name,
        resolve: (b) => {
          clearTimeout(t);
          const k = this.got.findIndex((g) => g.name === name);
          if (k >= 0) this.got.splice(k, 1);
          resolve(b);
        },
      });
    });
  }
}

/** A WebSocket server on loopback that keeps what each connection sent. */
export class ForkServer {
  readonly wss: WebSocketServer;
  readonly conns: { ws: WebSocket; req: IncomingMessage; texts: string[]; audio: Buffer[]; closed: Promise<number> }[] = [];
  private waiting: ((c: ForkServer['conns'][number]) => void) | null = null;

  constructor(opts: { verifyClient?: (info: { req: IncomingMessage }, cb: (ok: boolean, code?: number) => void) => void } = {}) {
    this.wss = new WebSocketServer({ host: '127.0.0.1', port: 0, ...opts });
    this.wss.on('connection', (ws, req) => {
      ws.on('error', () => undefined);
      const c = { ws, req, texts: [] as string[], audio: [] as Buffer[], closed: new Promise<number>((r) => ws.once('close', (code) => r(code))) };
      ws.on('message', (data: Buffer, binary) => (binary ? c.audio.push(data) : c.texts.push(data.toString('utf8'))));
      this.conns.push(c);
      this.waiting?.(c);
      this.waiting = null;
    });
  }

  /** Once listening. */
  ready(): Promise<this> {
    return new Promise((resolve, reject) => {
      if (this.wss.address()) return resolve(this);
      this.wss.once('listening', () => resolve(this));
      this.wss.once('error', reject);
    });
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as { port: number }).port}/fork`;
  }

  connection(): Promise<ForkServer['conns'][number]> {
    if (this.conns[0]) return Promise.resolve(this.conns[0]);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

/** Until `pred` holds, checked whenever the server gets a frame; fails the test after 5 s. */
export async function until(c: { ws: WebSocket }, pred: () => boolean, what: string): Promise<void> {
  if (pred()) return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what}: not within 5 s`)), 5000);
    const check = () => {
      if (!pred()) return;
      clearTimeout(t);
      c.ws.off('message', check);
      resolve();
    };
    c.ws.on('message', check);
  });
}

export const samplesOf = (frames: Buffer[]) => {
  const all = Buffer.concat(frames);
  return new Int16Array(all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength));
};
