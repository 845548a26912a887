// A raw drachtio protocol client written independently of sip-server/drachtio/framing.ts, the way
// drachtio-srf's wire-protocol.js frames messages (byte length, '#', payload).
import net from 'node:net';
import { randomUUID } from 'node:crypto';

export interface RawMessage {
  payload: string;
  tokens: string[];
  sip: string;
}

export class RawClient {
  readonly received: RawMessage[] = [];
  private buf = Buffer.alloc(0);
  private waiters: { pred: (m: RawMessage) => boolean; resolve: (m: RawMessage) => void }[] = [];
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => this.onData(d));
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {
      this.closed = true;
    });
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  /** send a payload prefixed by a fresh message id; returns the id */
  send(body: string): string {
    const id = randomUUID();
    this.writeRaw(`${id}|${body}`);
    return id;
  }

  writeRaw(payload: string): void {
    this.socket.write(`${Buffer.byteLength(payload, 'utf8')}#${payload}`);
  }

  waitFor(pred: (m: RawMessage) => boolean, timeoutMs = 3000): Promise<RawMessage> {
    const found = this.received.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timeout waiting for drachtio message')), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      });
    });
  }

  responseTo(id: string, timeoutMs?: number): Promise<RawMessage> {
    return this.waitFor((m) => m.tokens[1] === 'response' && m.tokens[2] === id, timeoutMs);
  }

  async request(body: string): Promise<RawMessage> {
    return this.responseTo(this.send(body));
  }

  waitClosed(timeoutMs = 3000): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('socket not closed')), timeoutMs);
      this.socket.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const hash = this.buf.indexOf('#');
      if (hash <= 0) return;
      const len = parseInt(this.buf.toString('utf8', 0, hash), 10);
      if (this.buf.length < hash + 1 + len) return;
      const payload = this.buf.toString('utf8', hash + 1, hash + 1 + len);
      this.buf = this.buf.subarray(hash + 1 + len);
      const eol = payload.indexOf('\r\n');
      const leader = eol < 0 ? payload : payload.slice(0, eol);
      const msg = { payload, tokens: leader.split('|'), sip: eol < 0 ? '' : payload.slice(eol + 2) };
      this.received.push(msg);
      for (const w of [...this.waiters]) {
        if (w.pred(msg)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(msg);
        }
      }
    }
  }
}
