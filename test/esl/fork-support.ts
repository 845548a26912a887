// What the audio fork tests share: the custom events fsmrf hands an Endpoint, a WebSocket server
// on loopback that keeps what each connection sent, and the rig their suites run on.
import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import WebSocket, { WebSocketServer } from 'ws';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { useFsmrfRig, type FsmrfFixture, type RigCall } from '../../testkit/esl/switch-rig';

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

export interface ForkRig extends FsmrfFixture {
  /** A channel (as `call`) whose fsmrf Endpoint's custom `events` a Heard collects from the start. */
  heardCall(events: string[]): Promise<RigCall & { heard: Heard }>;
  /** A fork server on loopback, listening (`opts`: its WebSocket server's); closed after the test. */
  server(opts?: ConstructorParameters<typeof ForkServer>[0]): Promise<ForkServer>;
}

/**
 * The audio fork suites' rig (useFsmrfRig): a fork may dial loopback (the operator's allowlist, as the
 * suites allow it: core/net/README.md) and gives up connecting after 2 s. After each test its calls are
 * hung up, then its fork servers closed, and no command may have failed inside the switch.
 */
export function useForkRig(): ForkRig {
  const fx = useFsmrfRig(() => ({ egress: new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' })), forkConnectTimeoutMs: 2000 }));
  const servers: ForkServer[] = [];
  const failures: Error[] = [];
  before(() => {
    fx.rig.esl.on('failed', (e: Error) => failures.push(e));
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    expect(failures, 'no command failed inside the switch').to.deep.equal([]);
  });
  return {
    get rig() {
      return fx.rig;
    },
    get dir() {
      return fx.dir;
    },
    call: () => fx.call(),
    subscriber: (events) => fx.subscriber(events),
    async heardCall(events) {
      const c = await fx.call();
      return { ...c, heard: new Heard(c.ep, events) };
    },
    server(opts) {
      const s = new ForkServer(opts);
      servers.push(s);
      return s.ready();
    },
  };
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
