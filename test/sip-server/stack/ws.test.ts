// The WebSocket transport (RFC 7118) of the bare stack against real `ws` clients: the "sip"
// subprotocol is required, one message per frame, received/rport on the WS Via, bad input refused
// without harm to other connections, connections per address bounded, dead peers closed after a
// missed ping, and a request to a flow that is gone fails at once.
import { expect } from 'chai';
import http from 'node:http';
import WebSocket from 'ws';
import { loadSipConfig } from '../../../sip-config';
import { FlowFailedError } from '../../../sip-server/transport';
import { Headers, SipRequest, type SipStack } from '../../../sip-server/stack';
import { WsSipPhone } from '../../support/ws-sip';
import { startStack } from './support';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function handshake(url: string, protocols?: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols ?? []);
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.once('error', reject);
  });
}

const options = (phone: WsSipPhone) => phone.request([`OPTIONS sip:127.0.0.1 SIP/2.0`, 'From: <sip:t@x.invalid>;tag=1', 'To: <sip:127.0.0.1>', `Call-ID: o-${Math.random()}`, 'CSeq: 1 OPTIONS']);

describe('sip-server WebSocket transport (RFC 7118)', function () {
  this.timeout(30_000);
  let stack: SipStack;
  let url: string;
  let requests = 0;

  before(async () => {
    stack = await startStack({
      listen: { wsPort: 0 },
      limits: { maxMessageSize: 4096, maxConnectionsPerAddress: 4, wsPingIntervalMs: 300 },
      // not allow-listed: the connection bound applies to 127.0.0.1
      security: { uaBlocklist: [], allowlist: [] },
    });
    stack.on('request', (req, srv) => {
      requests++;
      srv.respond(req.makeResponse(200));
    });
    url = `ws://127.0.0.1:${stack.listeningPoint('ws')!.port}`;
  });
  after(async () => {
    await stack?.stop();
  });

  it('settings: SIP_WS_PORT turns ws on (loopback unless SIP_WS_HOST says otherwise); SIP_WSS_PORT needs the TLS certificate', () => {
    expect(loadSipConfig({}).listen.wsPort).to.equal(undefined);
    const c = loadSipConfig({ SIP_WS_PORT: '5066' });
    expect(c.listen).to.include({ wsPort: 5066, wsHost: '127.0.0.1' });
    expect(() => loadSipConfig({ SIP_WSS_PORT: '7443' })).to.throw(/SIP_WSS_PORT: wss needs SIP_TLS_CERT/);
    expect(() => loadSipConfig({ SIP_WS_PORT: 'x' })).to.throw(/SIP_WS_PORT: expected a number/);
  });

  it('refuses a handshake without the "sip" subprotocol (none, or another) and plain HTTP', async () => {
    expect(await handshake(url)).to.equal(400);
    expect(await handshake(url, ['chat'])).to.equal(400);
    expect(await handshake(url, ['chat', 'sip'])).to.equal(101);
    const status = await new Promise<number>((resolve) =>
      http.get(url.replace('ws:', 'http:'), (res) => {
        res.resume();
        resolve(res.statusCode!);
      }),
    );
    expect(status).to.equal(426);
    const phone = await WsSipPhone.connect(url);
    expect(phone.ws.protocol).to.equal('sip');
    await phone.close();
  });

  it('one request per frame, answered on the same connection with received and rport on the WS Via', async () => {
    const phone = await WsSipPhone.connect(url);
    try {
      const res = await options(phone);
      expect(res.status).to.equal(200);
      expect(res.header('via')).to.match(new RegExp(`^SIP/2\\.0/WS ${phone.host};branch=z9hG4bK\\w+;rport=\\d+;received=127\\.0\\.0\\.1$`));
      // no Content-Length is needed: the frame is the message
      const reply = phone.wait((m) => m.status === 200, 2000);
      phone.send(
        [
          'OPTIONS sip:127.0.0.1 SIP/2.0',
          `Via: SIP/2.0/WS ${phone.host};branch=z9hG4bKnocl`,
          'From: <sip:t@x.invalid>;tag=2',
          'To: <sip:127.0.0.1>',
          'Call-ID: nocl',
          'CSeq: 1 OPTIONS',
          'Max-Forwards: 70',
          '',
          '',
        ].join('\r\n'),
      );
      await reply;
    } finally {
      await phone.close();
    }
  });

  it('garbage and non-SIP frames: a 400 where a request line parsed, nothing else; the connection and others keep working', async () => {
    const bad = await WsSipPhone.connect(url);
    const good = await WsSipPhone.connect(url);
    try {
      const before = requests;
      bad.send('{"type":"hello"}');
      bad.ws.send(Buffer.from([0, 1, 2, 3, 255, 254, 0x0d, 0x0a]));
      bad.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const r400 = bad.wait((m) => m.status === 400, 2000, '400');
      bad.send(
        [
          'OPTIONS sip:127.0.0.1 SIP/2.0',
          `Via: SIP/2.0/WS ${bad.host};branch=z9hG4bKbad`,
          'From: <sip:t@x.invalid>;tag=3',
          'To: <sip:127.0.0.1>',
          'Call-ID: bad',
          'CSeq: x OPTIONS',
          'Max-Forwards: 70',
          '',
          '',
        ].join('\r\n'),
      );
      expect((await r400).header('via')).to.include('z9hG4bKbad');
      expect(requests).to.equal(before);
      expect((await options(bad)).status).to.equal(200);
      expect((await options(good)).status).to.equal(200);
    } finally {
      await bad.close();
      await good.close();
    }
  });

  it('a frame over the size limit closes that connection (1009); another connection is unaffected', async () => {
    const big = await WsSipPhone.connect(url);
    const other = await WsSipPhone.connect(url);
    try {
      big.send(`OPTIONS sip:127.0.0.1 SIP/2.0\r\nX-Pad: ${'a'.repeat(8000)}\r\n\r\n`);
      expect(await big.closed).to.equal(1009);
      expect((await options(other)).status).to.equal(200);
    } finally {
      await other.close();
    }
  });

  it('bounds connections per address: one over the limit is refused with 503', async () => {
    const open = await Promise.all([1, 2, 3, 4].map(() => WsSipPhone.connect(url)));
    try {
      expect(await handshake(url, ['sip'])).to.equal(503);
    } finally {
      await Promise.all(open.map((p) => p.close()));
    }
    await sleep(100);
    expect(await handshake(url, ['sip'])).to.equal(101);
  });

  it('closes a connection that stops answering pings, within two ping intervals', async () => {
    const ws = new WebSocket(url, ['sip'], { autoPong: false });
    await new Promise((r) => ws.once('open', r));
    const started = Date.now();
    await new Promise((r) => ws.once('close', r));
    expect(Date.now() - started).to.be.lessThan(1500);
  });

  it('a request to a flow that is gone fails at once with FlowFailedError (no retransmission timeout)', async () => {
    const phone = await WsSipPhone.connect(url);
    // the flow's port, as the stack saw it (rport)
    const port = Number(/rport=(\d+)/.exec((await options(phone)).header('via')!)![1]);
    await phone.close();
    await sleep(50);
    const h = new Headers();
    h.append('From', '<sip:a@127.0.0.1>;tag=x');
    h.append('To', `<sip:b@${phone.host}>`);
    h.append('Call-ID', 'gone');
    h.append('CSeq', '1 OPTIONS');
    h.append('Content-Length', '0');
    const started = Date.now();
    const tx = stack.request(new SipRequest('OPTIONS', `sip:b@${phone.host};transport=ws`, h), { target: { transport: 'ws', host: '127.0.0.1', port } });
    const err = await new Promise<Error>((resolve) => tx.once('transport-error', resolve));
    expect(err).to.be.instanceOf(FlowFailedError);
    expect(Date.now() - started).to.be.lessThan(200);
    // and by its *.invalid Contact alone (no flow named): refused the same way, no DNS
    const tx2 = stack.request(new SipRequest('OPTIONS', `sip:b@${phone.host};transport=ws`, h.clone().set('Call-ID', 'gone2')));
    expect(await new Promise<Error>((resolve) => tx2.once('transport-error', resolve))).to.be.instanceOf(FlowFailedError);
  });

  it("answers a request with an X-Flow-Closed header from the network without it (the mark is the stack's own)", async () => {
    const phone = await WsSipPhone.connect(url);
    let seen: string | undefined = 'unset';
    const once = (req: SipRequest) => {
      seen = req.headers.get('X-Flow-Closed');
    };
    stack.once('request', once);
    try {
      expect((await phone.request(['OPTIONS sip:127.0.0.1 SIP/2.0', 'From: <sip:t@x.invalid>;tag=9', 'To: <sip:127.0.0.1>', 'Call-ID: fc', 'CSeq: 1 OPTIONS', 'X-Flow-Closed: ws-1'])).status).to.equal(
        200,
      );
      expect(seen).to.equal(undefined);
    } finally {
      await phone.close();
    }
  });
});
