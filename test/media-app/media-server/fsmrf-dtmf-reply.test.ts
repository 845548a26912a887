// sendDtmf on the fsmrf backend when the switch refuses (FsmrfCallEndpoint.sendDtmf): a switch's reply
// is network input, so a -ERR over several lines, with control characters, becomes an Error whose message
// holds it on one line. The switch is ours (test/esl/rig.ts) behind a TCP proxy on the leg's channel
// socket (the switch's outbound connection to fsmrf, whose address fsmrf advertises in its INVITE): the
// proxy passes every message on, except that once armed it answers `api uuid_send_dtmf` itself.
import { expect } from 'chai';
import net from 'node:net';
import { useFsmrfSuite } from './fsmrf-suite';

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
class ChannelProxy {
  /** the body `api uuid_send_dtmf` gets while set; null: the switch answers */
  answer: string | null = null;
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
        if (this.answer !== null && text.startsWith('api uuid_send_dtmf ')) {
          this.asked.push(text.trim());
          owed.push(`Content-Type: api/response\nContent-Length: ${Buffer.byteLength(this.answer)}\n\n${this.answer}`);
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

describe("media-app fsmrf backend: sendDtmf with a switch's multi-line -ERR", function () {
  this.timeout(30_000);
  let proxy: ChannelProxy | undefined;
  let proxyPort = 0;
  let fsmrfPort = 0;
  before(async () => {
    proxy = new ChannelProxy(() => fsmrfPort);
    proxyPort = await proxy.listen();
  });
  after(() => proxy?.close());
  const suite = useFsmrfSuite({
    // fsmrf advertises the proxy in its INVITEs (X-esl-outbound): each channel's socket comes through it
    ready: (backend) => {
      const ms = backend.link.ms as unknown as { listenPort: number; advertisedPort: number };
      fsmrfPort = ms.listenPort;
      ms.advertisedPort = proxyPort;
    },
  });

  it('the reply goes into the Error on one line, its control characters as spaces; the proxy alone passes +OK on', async () => {
    const { leg } = await suite.call();
    await leg.sendDtmf('1', 100); // the switch's own +OK, through the proxy
    proxy!.answer = '-ERR the first line\nthe second\r\n\tthe \x1b[31mthird\x1b[0m\u2028and\x00last\n';
    const err = await leg.sendDtmf('2', 100).then(
      () => null,
      (e: Error) => e,
    );
    expect(proxy!.asked, 'the proxy answered').to.have.length(1);
    expect(err?.message).to.equal('uuid_send_dtmf: -ERR the first line the second the [31mthird [0m and last');
    proxy!.answer = null;
    await leg.sendDtmf('3', 100); // the leg goes on
  });
});
