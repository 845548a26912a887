// How long sip-server remembers a dialog it proxied (srf.proxyRequest): until its BYE passes (the
// b2bua-proxy tests), until a request inside it is answered 481, or once no request inside it passed
// for SIP_PROXY_DIALOG_IDLE_MS (a BYE that went around us or was lost). Not a fixed time after the
// INVITE: a call with in-dialog traffic (session refreshes) stays known however long it lasts.
// While remembered, it holds its parties' TCP connections open against the idle sweep.
import { expect } from 'chai';
import net from 'node:net';
import { parseMessage, StreamFramer, type SipRequest, type SipResponse } from '../../../sip-server/message';
import { freePort } from '../../../testkit/ports';
import { UdpPeer, uaRequest } from './udp-peer';
import { connectSrf, disconnectSrf, sleep, startServer, until, type Server } from './harness';

const IDLE_MS = 2000;

describe('sip-server: how long a proxied dialog is remembered', function () {
  this.timeout(30_000);
  let s: Server;
  let srf: any;
  let caller: UdpPeer;
  let target: UdpPeer;

  beforeEach(async () => {
    s = await startServer({ config: { limits: { proxyDialogIdleMs: IDLE_MS } } });
    srf = await connectSrf(s.drachtioPort);
    caller = await UdpPeer.open(await freePort());
    target = await UdpPeer.open(await freePort());
    srf.invite((req: any) => srf.proxyRequest(req, [`sip:bob@127.0.0.1:${target.port}`]).catch(() => undefined));
  });
  afterEach(async () => {
    caller.close();
    target.close();
    disconnectSrf(srf);
    await s.close();
  });

  /** A proxied call, answered and ACKed; returns the target's To tag. */
  async function call(callId: string): Promise<string> {
    caller.send(uaRequest('INVITE', s.sipPort, caller.port, { callId, fromTag: 'c1' }), s.sipPort);
    const inv = await target.request('INVITE', 8000);
    const ok = inv.makeResponse(200, undefined, { toTag: 'tgt' });
    ok.headers.set('Contact', `<sip:bob@127.0.0.1:${target.port}>`);
    target.send(ok.toString(), s.sipPort);
    const up = await caller.response(200, 'INVITE');
    caller.send(uaRequest('ACK', s.sipPort, caller.port, { callId, fromTag: 'c1', toTag: up.toTag }), s.sipPort);
    await target.request('ACK');
    return up.toTag!;
  }

  /** The caller sends INFO inside the call; the target answers `status`; resolves once the caller has the answer. */
  async function info(callId: string, toTag: string, cseq: number, status: number): Promise<void> {
    caller.send(uaRequest('INFO', s.sipPort, caller.port, { callId, fromTag: 'c1', toTag, cseq }), s.sipPort);
    const req = await target.waitFor((m) => m.isRequest && m.cseq.method === 'INFO' && m.cseq.seq === cseq);
    target.send((req as any).makeResponse(status).toString(), s.sipPort);
    await caller.waitFor((m) => !m.isRequest && m.cseq.method === 'INFO' && m.cseq.seq === cseq);
  }

  it('forgotten once no request inside it passed for SIP_PROXY_DIALOG_IDLE_MS; each one re-arms the bound', async () => {
    const toTag = await call('px-idle');
    await sleep(IDLE_MS / 2);
    await info('px-idle', toTag, 2, 200);
    const refreshedAt = Date.now();
    await sleep(IDLE_MS * 0.75); // past the bound counted from the INVITE, within it from the INFO
    expect(s.drachtio.engine.stats().proxies, 'still remembered after the INFO').to.equal(1);
    await until(() => s.drachtio.engine.stats().proxies === 0, IDLE_MS + 2000, 'the idle proxied dialog forgotten');
    expect(Date.now() - refreshedAt, 'forgotten a full bound after the last request').to.be.greaterThan(IDLE_MS - 100);
    // its in-dialog requests are no longer relayed: the server answers them itself
    caller.send(uaRequest('INFO', s.sipPort, caller.port, { callId: 'px-idle', fromTag: 'c1', toTag, cseq: 3 }), s.sipPort);
    const res = await caller.waitFor((m) => !m.isRequest && m.cseq.method === 'INFO' && m.cseq.seq === 3);
    expect((res as any).status).to.not.equal(200);
  });

  it('a 481 to a request inside it ends it at once', async () => {
    const toTag = await call('px-481');
    expect(s.drachtio.engine.stats().proxies).to.equal(1);
    await info('px-481', toTag, 2, 481);
    await until(() => s.drachtio.engine.stats().proxies === 0, 1000, 'the proxied dialog forgotten on 481');
  });
});

// A proxied call whose caller is on TCP stays silent 3x SIP_TCP_IDLE_TIMEOUT_MS: the proxied dialog
// holds the caller's connection, so the callee's BYE reaches the caller over it (its Contact names a
// port nothing listens on); once the BYE has passed, the connection is closed as any idle one.
describe('sip-server: a proxied call keeps its TCP caller connection (issue 52)', function () {
  this.timeout(30_000);
  const TCP_IDLE_MS = 1500;
  let s: Server;
  let srf: any;
  let target: UdpPeer;
  let sock: net.Socket;

  before(async () => {
    s = await startServer({ config: { limits: { tcpIdleTimeoutMs: TCP_IDLE_MS } } });
    srf = await connectSrf(s.drachtioPort);
    target = await UdpPeer.open(await freePort());
    srf.invite((req: any) => srf.proxyRequest(req, [`sip:bob@127.0.0.1:${target.port}`]).catch(() => undefined));
  });
  after(async () => {
    sock?.destroy();
    target.close();
    disconnectSrf(srf);
    await s.close();
  });

  it("held 3x the idle timeout, the callee's BYE reaches the caller on its connection; then the connection is closed", async () => {
    sock = net.connect(s.sipPort, '127.0.0.1');
    sock.on('error', () => undefined);
    await new Promise((r) => sock.once('connect', r));
    const framer = new StreamFramer();
    const got: (SipRequest | SipResponse)[] = [];
    sock.on('data', (d: Buffer) => {
      for (const ev of framer.push(d)) if (ev.type === 'message') got.push(parseMessage(ev.data, { mode: 'stream' }));
    });
    let closedAt = 0;
    sock.once('close', () => (closedAt = Date.now()));
    const dead = await freePort();
    const overTcp = (text: string) => text.replace('SIP/2.0/UDP', 'SIP/2.0/TCP').replace(`<sip:alice@127.0.0.1:${dead}>`, `<sip:alice@127.0.0.1:${dead};transport=tcp>`);
    sock.write(overTcp(uaRequest('INVITE', s.sipPort, dead, { callId: 'px-tcp', fromTag: 'c1' })));
    const inv = await target.request('INVITE', 8000);
    const ok = inv.makeResponse(200, undefined, { toTag: 'tgt' });
    ok.headers.set('Contact', `<sip:bob@127.0.0.1:${target.port}>`);
    target.send(ok.toString(), s.sipPort);
    await until(() => got.some((m) => !m.isRequest && (m as SipResponse).status === 200), 5000, 'the 200 over TCP');
    sock.write(overTcp(uaRequest('ACK', s.sipPort, dead, { callId: 'px-tcp', fromTag: 'c1', toTag: 'tgt' })));
    await target.request('ACK');
    await sleep(3 * TCP_IDLE_MS);
    expect(closedAt, 'the connection was closed during the call').to.equal(0);
    // the callee hangs up: its BYE goes to the caller's Contact, over the caller's connection
    target.send(
      [
        `BYE sip:alice@127.0.0.1:${dead};transport=tcp SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${target.port};branch=z9hG4bK-px-tcp-bye;rport`,
        `From: <sip:service@127.0.0.1:${s.sipPort}>;tag=tgt`,
        `To: <sip:alice@127.0.0.1:${dead}>;tag=c1`,
        'Call-ID: px-tcp',
        'CSeq: 1 BYE',
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
      s.sipPort,
    );
    await until(() => got.some((m) => m.isRequest && (m as SipRequest).method === 'BYE'), 5000, 'the BYE on the caller connection');
    const bye = got.find((m) => m.isRequest && (m as SipRequest).method === 'BYE') as SipRequest;
    sock.write(bye.makeResponse(200).toString());
    await target.response(200, 'BYE');
    const byeAt = Date.now();
    await until(() => s.drachtio.engine.stats().proxies === 0, 2000, 'the proxied dialog forgotten');
    await until(() => closedAt > 0, TCP_IDLE_MS + TCP_IDLE_MS + 1000, 'the connection closed after the call');
    expect(closedAt - byeAt, 'closed once idle for the timeout').to.be.greaterThan(TCP_IDLE_MS - 150);
  });
});
