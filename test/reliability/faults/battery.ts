/**
 * The HTTP / WebSocket fault battery's listeners and stages (http-ws-faults.test.ts runs them): every
 * stage is one misbehaving connection to one listener, bounded in time; none of them may end a process.
 */
import type net from 'node:net';
import { connect, frame, head, readFor, reset, sleep, trickle, upgradeHeaders } from './raw-socket';

export interface Upgrade {
  path: string;
  headers: Record<string, string>;
}

export interface Listener {
  name: string;
  port: number;
  /** 'http': an HTTP server (REST, WebSockets, /metrics); 'tcp': a stream of another protocol (SIP, drachtio) */
  kind: 'http' | 'tcp';
  /** a plain request's path */
  path: string;
  /** an upgrade the listener admits (none: this battery has no credential for one) */
  accept?: () => Upgrade;
  /** upgrades it refuses: wrong Origin, no or wrong credentials, no subprotocol */
  refuse?: (() => Upgrade)[];
}

export interface Stage {
  name: string;
  run(l: Listener, keep: net.Socket[]): Promise<void>;
}

const BIG = 'x'.repeat(20 * 1024);

/** Writes `text`, waits `waitMs` (0: not at all), resets. */
async function writeReset(port: number, text: string | Buffer, waitMs = 0): Promise<void> {
  const s = await connect(port);
  if (!s) return;
  s.write(text);
  if (waitMs) await readFor(s, waitMs);
  reset(s);
}

/** An upgrade request, with `upgrade`'s headers over well-formed ones. */
function upgradeText(l: Listener, u: Upgrade, extra: Record<string, string> = {}): string {
  return head(u.path, { ...upgradeHeaders(l.port, u.headers), ...extra });
}

/** The accepted upgrade's socket once the 101 is read, or null when the listener did not accept. */
async function accepted(l: Listener): Promise<net.Socket | null> {
  const s = await connect(l.port);
  if (!s) return null;
  s.write(upgradeText(l, l.accept!()));
  const got = await readFor(s, 5000);
  if (!got.startsWith('HTTP/1.1 101')) {
    reset(s);
    return null;
  }
  return s;
}

/** A malformed or oversized frame on an accepted socket: what the server answers in 300 ms, then a reset. */
function badFrame(name: string, f: () => Buffer): Stage {
  return {
    name: `frame: ${name}`,
    async run(l) {
      if (!l.accept) return;
      const s = await accepted(l);
      if (!s) return;
      s.write(f());
      await readFor(s, 300, /$^/);
      reset(s);
    },
  };
}

const any: Stage[] = [
  { name: 'reset right after connect', run: async (l) => reset(await connect(l.port)) },
  { name: 'reset at once, nothing sent', run: async (l) => writeReset(l.port, '', 0) },
  { name: 'garbage then reset', run: async (l) => writeReset(l.port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0xff, 0xff, 0, 0, 13, 10, 13, 10]), 100) },
  { name: 'a 100 kB line of garbage then reset', run: async (l) => writeReset(l.port, `${'A'.repeat(100 * 1024)}\r\n\r\n`, 200) },
  { name: 'half-open (stops reading and writing mid-message)', run: async (l, keep) => void (await connect(l.port).then((s) => s && (s.write('GET / HTTP/1.1\r\nHo'), s.pause(), keep.push(s)))) },
];

const http: Stage[] = [
  { name: 'reset mid request-line', run: async (l) => writeReset(l.port, `GET ${l.path.slice(0, 5)}`) },
  { name: 'reset mid headers', run: async (l) => writeReset(l.port, `GET ${l.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Ag`) },
  { name: 'reset after a whole request, before the answer', run: async (l) => writeReset(l.port, head(l.path, { Host: '127.0.0.1' })) },
  { name: 'reset while the answer is read', run: async (l) => writeReset(l.port, head(l.path, { Host: '127.0.0.1' }), 30) },
  { name: 'oversized headers', run: async (l) => writeReset(l.port, head(l.path, { Host: '127.0.0.1', 'X-Big': BIG }), 500) },
  { name: 'oversized request line', run: async (l) => writeReset(l.port, head(`${l.path}?q=${BIG}`, { Host: '127.0.0.1' }), 500) },
  { name: 'malformed request', run: async (l) => writeReset(l.port, 'GET / HTTP/9.9 extra\r\nHost 127.0.0.1\r\n\r\n', 300) },
  { name: 'upgrade on a path nobody handles, then reset', run: async (l) => writeReset(l.port, head('/no-such-socket', upgradeHeaders(l.port)), 200) },
  { name: 'upgrade on a path nobody handles, reset at once', run: async (l) => writeReset(l.port, head('/no-such-socket', upgradeHeaders(l.port))) },
  { name: 'oversized upgrade request', run: async (l) => writeReset(l.port, head(l.accept?.().path ?? l.path, upgradeHeaders(l.port, { 'X-Big': BIG })), 300) },
];

const refused: Stage[] = [
  { name: 'refused upgrade, reset at once', run: async (l) => each(l.refuse, (u) => writeReset(l.port, upgradeText(l, u()))) },
  { name: 'refused upgrade, reset 20 ms later', run: async (l) => each(l.refuse, (u) => writeReset(l.port, upgradeText(l, u()), 20)) },
  { name: 'refused upgrade, reset after the answer', run: async (l) => each(l.refuse, (u) => writeReset(l.port, upgradeText(l, u()), 2000)) },
];

async function each<T>(xs: T[] | undefined, f: (x: T) => Promise<void>): Promise<void> {
  for (const x of xs ?? []) await f(x);
}

const upgrade: Stage[] = [
  { name: 'malformed upgrade: bad Sec-WebSocket-Key', run: async (l) => l.accept && writeReset(l.port, upgradeText(l, l.accept(), { 'Sec-WebSocket-Key': 'not-a-key' }), 500) },
  { name: 'malformed upgrade: version 7', run: async (l) => l.accept && writeReset(l.port, upgradeText(l, l.accept(), { 'Sec-WebSocket-Version': '7' }), 500) },
  { name: 'malformed upgrade: reset at once', run: async (l) => l.accept && writeReset(l.port, upgradeText(l, l.accept(), { 'Sec-WebSocket-Key': '' })) },
  { name: 'accepted upgrade, reset before the 101', run: async (l) => l.accept && writeReset(l.port, upgradeText(l, l.accept())) },
  { name: 'accepted upgrade, reset after the 101', run: async (l) => l.accept && reset(await accepted(l)) },
  {
    name: 'accepted upgrade, reset mid frame',
    async run(l) {
      if (!l.accept) return;
      const s = await accepted(l);
      s?.write(frame(0x1, Buffer.alloc(10, 0x41), { declared: 1000 }));
      await sleep(50);
      reset(s);
    },
  },
  {
    name: 'accepted upgrade, then half-open (stops reading)',
    async run(l, keep) {
      if (!l.accept) return;
      const s = await accepted(l);
      if (s) (s.pause(), keep.push(s));
    },
  },
  badFrame('unmasked', () => frame(0x1, Buffer.from('hello'), { mask: false })),
  badFrame('reserved opcode', () => frame(0x3, Buffer.from('hello'))),
  badFrame('RSV1 without an extension', () => frame(0x1, Buffer.from('hello'), { rsv: 4 })),
  badFrame('fragmented ping', () => frame(0x9, Buffer.from('hi'), { fin: false })),
  badFrame('close with a 1-byte payload', () => frame(0x8, Buffer.from([3]))),
  badFrame('invalid UTF-8 text', () => frame(0x1, Buffer.from([0xc3, 0x28, 0xff]))),
  badFrame('oversized (10 MB declared)', () => frame(0x2, Buffer.alloc(4096), { declared: 10 * 1024 * 1024 })),
  badFrame('length beyond 2^53', () => frame(0x2, Buffer.alloc(16), { declared: 2n ** 63n })),
  badFrame('a binary message over the limit (70 kB)', () => frame(0x2, Buffer.alloc(70 * 1024, 1))),
];

/** Every stage of a listener, in order (slow and half-open stages hold their sockets in `keep`). */
export function stagesOf(l: Listener): Stage[] {
  if (l.kind === 'tcp') return any;
  return [...any, ...http, ...(l.refuse ? refused : []), ...(l.accept ? upgrade : [])];
}

/** A slow client: a request a byte a second for `forMs`, then a reset. */
export async function slow(l: Listener, forMs: number): Promise<void> {
  const s = await connect(l.port);
  if (!s) return;
  const text = l.kind === 'http' ? head(l.accept?.().path ?? l.path, l.accept ? upgradeHeaders(l.port, l.accept().headers) : { Host: '127.0.0.1' }) : 'OPTIONS sip:x SIP/2.0\r\n';
  await trickle(s, text, 1000, forMs);
}
