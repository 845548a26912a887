// How long sip-server remembers a dialog it proxied (srf.proxyRequest): until its BYE passes (the
// b2bua-proxy tests), until a request inside it is answered 481, or once no request inside it passed
// for SIP_PROXY_DIALOG_IDLE_MS (a BYE that went around us or was lost). Not a fixed time after the
// INVITE: a call with in-dialog traffic (session refreshes) stays known however long it lasts.
import { expect } from 'chai';
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
