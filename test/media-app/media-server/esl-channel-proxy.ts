// A TCP proxy on a leg's channel socket (the switch's outbound connection to fsmrf, whose address fsmrf
// advertises in its INVITE): it passes every message on, except that once armed it answers an `api`
// command itself (a reply of a switch's the test writes: a multi-line -ERR). useChannelProxy sets it in
// front of a suite's backend.
import net from 'node:net';
import { useFsmrfSuite, type FsmrfSuite } from '../../../testkit/esl/fsmrf-suite';

/** Event-socket messages of a byte stream: headers up to a blank line, then Content-Length bytes of body. */
class EslFrames {
  private buf = Buffer.alloc(0);
  get empty(): boolean {
    return this.buf.length === 0;
  }
  push(chunk: Buffer): Buffer[] {
    this.buf = Buffer.concat([this.buf, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      const end = this.buf.indexOf('\n\n');
      if (end < 0) return out;
      const length = Number(/^content-length:\s*(\d+)/im.exec(this.buf.subarray(0, end).toString('latin1'))?.[1] ?? 0);
      if (this.buf.length < end + 2 + length) return out;
      out.push(this.buf.subarray(0, end + 2 + length));
      this.buf = this.buf.subarray(end + 2 + length);
    }
  }
}

/** The proxy: the switch connects here, it connects on to fsmrf's listener (`target()`). */
export class ChannelProxy {
  /** while set, `api <command> …` gets `body` from the proxy; null: the switch answers */
  answer: { command: string; body: string } | null = null;
  readonly asked: string[] = [];
  private readonly server = net.createServer((fromSwitch) => this.relay(fromSwitch));
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly target: () => number) {
    this.server.on('error', () => undefined);
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }

  private relay(fromSwitch: net.Socket): void {
    const toApp = net.connect(this.target(), '127.0.0.1');
    for (const [a, b] of [
      [fromSwitch, toApp],
      [toApp, fromSwitch],
    ] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => (this.sockets.delete(a), b.destroy()));
    }
    const switchSays = new EslFrames();
    const appSays = new EslFrames();
    const owed: string[] = [];
    // a reply of ours goes in between two of the switch's messages, never inside one
    const flush = () => {
      while (switchSays.empty && owed.length) toApp.write(owed.shift()!);
    };
    toApp.on('data', (d: Buffer) => {
      for (const m of appSays.push(d)) {
        const text = m.toString('latin1');
        const a = this.answer;
        if (a && text.startsWith(`api ${a.command} `)) {
          this.asked.push(text.trim());
          owed.push(`Content-Type: api/response\nContent-Length: ${Buffer.byteLength(a.body)}\n\n${a.body}`);
        } else fromSwitch.write(m);
      }
      flush();
    });
    fromSwitch.on('data', (d: Buffer) => {
      for (const m of switchSays.push(d)) toApp.write(m);
      flush();
    });
  }
}

/** A suite of the fsmrf backend whose channel sockets all come through a ChannelProxy (`opts` as useFsmrfSuite's, but `ready`). */
export function useChannelProxySuite(opts: Omit<Parameters<typeof useFsmrfSuite>[0] & object, 'ready'> = {}): { suite: FsmrfSuite; proxy: () => ChannelProxy } {
  let proxy: ChannelProxy | undefined;
  let proxyPort = 0;
  let fsmrfPort = 0;
  before(async () => {
    proxy = new ChannelProxy(() => fsmrfPort);
    proxyPort = await proxy.listen();
  });
  after(() => proxy?.close());
  const suite = useFsmrfSuite({
    ...opts,
    // fsmrf advertises the proxy in its INVITEs (X-esl-outbound): each channel's socket comes through it
    ready: (backend) => {
      const ms = backend.link.ms as unknown as { listenPort: number; advertisedPort: number };
      fsmrfPort = ms.listenPort;
      ms.advertisedPort = proxyPort;
    },
  });
  return { suite, proxy: () => proxy! };
}
