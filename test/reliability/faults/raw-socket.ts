/**
 * A misbehaving client at the TCP level, for the HTTP / WebSocket fault battery: connect, write what a
 * stage needs, then reset (RST, not FIN), stall, or trickle. Every socket here has its error handler
 * from the start: the faults are the server's to survive, not this process's.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A connected socket (error handler attached), or null when the port refuses (a dead process: the battery's verdict says so). */
export function connect(port: number): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.on('error', () => resolve(null));
    s.once('connect', () => resolve(s));
    s.setTimeout(15_000, () => s.destroy());
  });
}

/** RST the connection (SO_LINGER 0), the way a client that crashed or a middlebox ends it. */
export function reset(s: net.Socket | null): void {
  if (s && !s.destroyed) s.resetAndDestroy();
}

/** Everything the server sends until `until` matches, the socket closes, or `ms` pass. */
export function readFor(s: net.Socket, ms: number, until: RegExp = /\r\n\r\n/): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const done = () => {
      clearTimeout(t);
      s.off('data', onData);
      s.off('close', done);
      resolve(got);
    };
    const onData = (d: Buffer) => {
      got += d.toString('latin1');
      if (until.test(got)) done();
    };
    const t = setTimeout(done, ms);
    s.on('data', onData);
    s.once('close', done);
  });
}

export function wsKey(): string {
  return randomBytes(16).toString('base64');
}

/** A request head: the request line, then `headers` in order (values as given). */
export function head(path: string, headers: Record<string, string>, method = 'GET'): string {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

/** The headers of a well-formed WebSocket upgrade, with `extra` over them. */
export function upgradeHeaders(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return { Host: `127.0.0.1:${port}`, Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': wsKey(), 'Sec-WebSocket-Version': '13', ...extra };
}

export interface FrameOptions {
  fin?: boolean;
  rsv?: number;
  /** client frames must be masked (RFC 6455 §5.1); false sends an unmasked one */
  mask?: boolean;
  /** the payload length the header claims (default the payload's) */
  declared?: number | bigint;
}

/** One WebSocket frame as a client sends it. */
export function frame(opcode: number, payload: Buffer, o: FrameOptions = {}): Buffer {
  const mask = o.mask ?? true;
  const len = BigInt(o.declared ?? payload.length);
  const b0 = ((o.fin ?? true) ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | opcode;
  let lenBytes: Buffer;
  if (len < 126n) lenBytes = Buffer.from([Number(len) | (mask ? 0x80 : 0)]);
  else if (len < 65536n) {
    lenBytes = Buffer.alloc(3);
    lenBytes[0] = 126 | (mask ? 0x80 : 0);
    lenBytes.writeUInt16BE(Number(len), 1);
  } else {
    lenBytes = Buffer.alloc(9);
    lenBytes[0] = 127 | (mask ? 0x80 : 0);
    lenBytes.writeBigUInt64BE(len, 1);
  }
  if (!mask) return Buffer.concat([Buffer.from([b0]), lenBytes, payload]);
  const key = randomBytes(4);
  const body = Buffer.from(payload.map((x, i) => x ^ key[i % 4]!));
  return Buffer.concat([Buffer.from([b0]), lenBytes, key, body]);
}

/** Writes `text` a byte every `everyMs` for at most `forMs`, then resets (a slow-loris client, bounded). */
export async function trickle(s: net.Socket, text: string, everyMs: number, forMs: number): Promise<void> {
  const end = Date.now() + forMs;
  for (let i = 0; i < text.length && Date.now() < end && !s.destroyed; i++) {
    s.write(text[i]!);
    await sleep(everyMs);
  }
  reset(s);
}
