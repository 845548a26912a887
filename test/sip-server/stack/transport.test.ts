// Transport behaviour: large UDP datagrams, TCP connection reuse, response routing by Via/rport.
import { expect } from 'chai';
import net from 'node:net';
import { parseMessage, SipResponse, SipStack, StreamFramer } from '../../../sip-server/stack';
import { answerAll200, message, UdpPeer, rawRequest, startStack } from './support';
import { finalOf } from './test-uac';
import { freePort } from '../../../testkit/ports';
import { sipRegistry } from '../../../sip-server/metrics';

describe('transports', function () {
  this.timeout(20_000);
  let a: SipStack;
  let b: SipStack;
  beforeEach(async () => {
    a = await startStack();
    b = await startStack();
  });
  afterEach(async () => {
    await a.stop();
    await b.stop();
  });

  it('carries a 30 KB request over UDP in one datagram', async () => {
    const got = answerAll200(b);
    const tx = a.request(message(a, `sip:x@127.0.0.1:${b.listening[0].port}`, 'x'.repeat(30_000)));
    expect((await finalOf(tx)).status).to.equal(200);
    expect(got[0].body.length).to.equal(30_000);
    expect(got[0].source!.transport).to.equal('udp');
  });

  it('TCP: responses return on the request connection and later requests reuse it', async () => {
    const sources: string[] = [];
    b.on('request', (req, srv) => {
      sources.push(`${req.source!.address}:${req.source!.port}`);
      srv.respond(req.makeResponse(200));
    });
    const target = `sip:x@127.0.0.1:${b.listening[0].port};transport=tcp`;
    for (let i = 0; i < 3; i++) expect((await finalOf(a.request(message(a, target, 'x'.repeat(10))))).status).to.equal(200);
    expect(new Set(sources).size, 'one connection').to.equal(1);
  });

  it('TCP from a raw client: the response comes back on that connection even if the Via port is wrong', async () => {
    b.on('request', (req, srv) => srv.respond(req.makeResponse(200)));
    const port = b.listening[0].port;
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const framer = new StreamFramer();
    const res = new Promise<SipResponse>((resolve) =>
      sock.on('data', (d: Buffer) => {
        for (const ev of framer.push(d)) if (ev.type === 'message') resolve(parseMessage(ev.data, { mode: 'stream' }) as SipResponse);
      }),
    );
    sock.write(rawRequest('OPTIONS', '127.0.0.1', 1, port).replace('SIP/2.0/UDP', 'SIP/2.0/TCP'));
    expect((await res).status).to.equal(200);
    sock.destroy();
  });

  it('UDP: responses follow received/rport, not the (unreachable) Via sent-by', async () => {
    b.on('request', (req, srv) => srv.respond(req.makeResponse(200)));
    const peer = await new UdpPeer().bind();
    try {
      const port = b.listening[0].port;
      // Via claims port 9 (discard) but carries rport: the answer must reach the real source port
      await peer.send(rawRequest('OPTIONS', '192.0.2.1', 9, port), port);
      const msgs = await peer.waitFor((m) => m.length > 0);
      const r = parseMessage(msgs[0].text) as SipResponse;
      expect(r.topVia!.received).to.equal('127.0.0.1');
      expect(r.topVia!.rport).to.equal(peer.port);
    } finally {
      peer.close();
    }
  });

  it('transport errors surface as transport-error (TCP to a closed port)', async () => {
    const closed = await freePort();
    const tx = a.request(message(a, `sip:x@127.0.0.1:${closed};transport=tcp`, 'x'.repeat(10)));
    const err = await new Promise<Error>((r) => tx.on('transport-error', r));
    expect(err.message).to.match(/ECONNREFUSED/);
    expect(tx.state).to.equal('Terminated');
  });

  it('malformed requests get 400 naming the problem (505 for a bad version); metrics count requests and responses', async () => {
    b.on('request', (req, srv) => srv.respond(req.makeResponse(200)));
    const peer = await new UdpPeer().bind();
    try {
      const port = b.listening[0].port;
      await peer.send(rawRequest('OPTIONS', '127.0.0.1', peer.port, port, { cseqMethod: 'INVITE' }), port);
      await peer.send(rawRequest('OPTIONS', '127.0.0.1', peer.port, port).replace('OPTIONS sip:service@127.0.0.1:' + port + ' SIP/2.0', `OPTIONS sip:service@127.0.0.1:${port} SIP/3.0`), port);
      const msgs = await peer.waitFor((m) => m.length >= 2);
      const lines = msgs.map((m) => m.text.split('\r\n')[0]).sort();
      expect(lines[0]).to.match(/^SIP\/2.0 400 Bad Request \(CSeq method does not match/);
      expect(lines[1]).to.match(/^SIP\/2.0 505 /);
      const text = await sipRegistry.metrics();
      expect(text).to.match(/sip_responses_sent_total\{method="\w+",code="400"\} [1-9]/);
      expect(text).to.match(/sip_requests_received_total\{method="OPTIONS"\} [1-9]/);
      expect(text).to.match(/sip_transactions_in_flight\{kind="server"\}/);
    } finally {
      peer.close();
    }
  });
});
