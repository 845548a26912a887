// Idle TCP connections (issue 52): the sweep closes a connection idle for SIP_TCP_IDLE_TIMEOUT_MS
// unless a registration granted over it is unexpired (RFC 5626/5923: the platform reaches the phone
// through it). A raw TCP client registers; the TU answers as a registrar does (each Contact with the
// expiry granted, none once removed). The idle timeout is 1.5 s, the sweep runs every 1.5 s.
import { expect } from 'chai';
import net from 'node:net';
import { parseMessage, SipResponse, SipStack, StreamFramer } from '../../../sip-server/stack';
import { rawRequest, startStack } from './support';

const IDLE_MS = 1500;
/** the latest a connection may close after its idle time starts counting: the timeout, one sweep period, slack for a loaded host */
const CLOSED_BY_MS = IDLE_MS + IDLE_MS + 1000;

/** A phone on one TCP connection: sends requests, reads the answers, notes when the server closes it. */
class TcpPhone {
  private readonly framer = new StreamFramer();
  private readonly waiting: ((r: SipResponse) => void)[] = [];
  closedAt?: number;
  readonly closed: Promise<number>;
  private constructor(
    readonly sock: net.Socket,
    readonly stackPort: number,
  ) {
    sock.on('data', (d: Buffer) => {
      for (const ev of this.framer.push(d)) if (ev.type === 'message') this.waiting.shift()?.(parseMessage(ev.data, { mode: 'stream' }) as SipResponse);
    });
    sock.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      sock.once('close', () => {
        this.closedAt = Date.now();
        resolve(this.closedAt);
      }),
    );
  }

  static async open(stackPort: number): Promise<TcpPhone> {
    const sock = net.connect(stackPort, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    return new TcpPhone(sock, stackPort);
  }

  /** REGISTER over the connection (`expires` on its Contact); resolves with the answer. */
  register(expires: number, callId: string, cseq: number): Promise<SipResponse> {
    const local = this.sock.localPort!;
    const text = rawRequest('REGISTER', '127.0.0.1', local, this.stackPort, { callId, cseq })
      .replace('SIP/2.0/UDP', 'SIP/2.0/TCP')
      .replace(/Contact: <([^>]*)>/, `Contact: <$1;transport=tcp>;expires=${expires}`);
    return this.send(text);
  }

  send(text: string): Promise<SipResponse> {
    const answer = new Promise<SipResponse>((resolve) => this.waiting.push(resolve));
    this.sock.write(text);
    return answer;
  }
}

/**
 * What a registrar answers: every binding of the address of record in one comma-separated Contact
 * (another phone's first, as media-app's registrar lists them), removed ones (expires=0) left out.
 */
function actAsRegistrar(stack: SipStack): void {
  stack.on('request', (req, srv) => {
    const res = req.makeResponse(200);
    if (req.method === 'REGISTER') {
      const bound = ['<sip:other@192.0.2.9:5060>;expires=100'];
      for (const c of req.contacts) {
        const expires = Number(c.params.expires ?? req.headers.get('Expires') ?? 3600);
        if (expires > 0) bound.push(`<${c.uri.toString()}>;expires=${expires}`);
      }
      res.headers.append('Contact', bound.join(', '));
    }
    srv.respond(res);
  });
}

describe('sip-server: which idle TCP connections are closed', function () {
  this.timeout(30_000);
  let stack: SipStack;
  let phone: TcpPhone | undefined;

  beforeEach(async () => {
    stack = await startStack({ limits: { tcpIdleTimeoutMs: IDLE_MS } });
    actAsRegistrar(stack);
  });
  afterEach(async () => {
    phone?.sock.destroy();
    phone = undefined;
    await stack.stop();
  });

  it('a connection that carries nothing is closed once idle for the timeout, not before', async () => {
    phone = await TcpPhone.open(stack.listening[0].port);
    const res = await phone.send(rawRequest('OPTIONS', '127.0.0.1', phone.sock.localPort!, phone.stackPort).replace('SIP/2.0/UDP', 'SIP/2.0/TCP'));
    expect(res.status).to.equal(200);
    const lastUse = Date.now();
    const closedAt = await phone.closed;
    expect(closedAt - lastUse, 'closed after').to.be.within(IDLE_MS - 100, CLOSED_BY_MS);
  });

  it('a registration granted over it keeps it open past 3x the idle timeout, until the binding expires', async () => {
    phone = await TcpPhone.open(stack.listening[0].port);
    const res = await phone.register(6, 'reg-expiry', 1);
    expect(res.status).to.equal(200);
    const registeredAt = Date.now();
    const closedAt = await phone.closed;
    // held through 3x the idle timeout by the binding (6 s), closed at the first sweep after it lapsed
    expect(closedAt - registeredAt, 'closed after').to.be.within(6000 - 100, 6000 + IDLE_MS + 1000);
  });

  it('a re-REGISTER moves the binding (and the connection) on; the un-REGISTER lets the connection go', async () => {
    phone = await TcpPhone.open(stack.listening[0].port);
    expect((await phone.register(3, 'reg-refresh', 1)).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await phone.register(3600, 'reg-refresh', 2)).status).to.equal(200);
    // 3x the idle timeout with no traffic: the first binding's 3 s are long gone, the refreshed one holds it
    await new Promise((r) => setTimeout(r, 3 * IDLE_MS));
    expect(phone.closedAt, 'closed while its binding was live').to.equal(undefined);
    const res = await phone.register(0, 'reg-refresh', 3);
    expect(res.status).to.equal(200);
    expect(res.headers.get('Contact'), 'the binding is removed').to.not.include(`:${phone.sock.localPort}`);
    const unregisteredAt = Date.now();
    const closedAt = await phone.closed;
    expect(closedAt - unregisteredAt, 'closed after the un-REGISTER').to.be.within(IDLE_MS - 100, CLOSED_BY_MS);
  });
});
