// A server transaction whose TU is done (final response out; for an INVITE, its ACK in) keeps only the
// bytes of its last response while it absorbs retransmissions (Timers J, I, L): its request, the
// response object and the TU's listeners are released. At 300 calls/s they were ~100 MB of heap.
import { expect } from 'chai';
import { parseMessage, SipRequest, SipResponse, SipStack } from '../../../sip-server/stack';
import type { ServerTransaction } from '../../../sip-server/transaction/server';
import { collectGarbage } from '../../../testkit/gc';
import { UdpPeer, firstLines, rawRequest, sleep, startStack } from './support';

/** What the TU saw, held weakly where the transaction is the only one that should keep it. */
interface Seen {
  srv: ServerTransaction;
  req: WeakRef<SipRequest>;
  big: WeakRef<{ payload: string[] }>;
}

describe('settled server transactions', function () {
  this.timeout(20_000);
  let stack: SipStack;
  let peer: UdpPeer;
  let port: number;
  const seen: Seen[] = [];

  beforeEach(async () => {
    // T1 500 ms: Timers J and L are 32 s, so every transaction below is still absorbing retransmissions
    stack = await startStack({ timers: { t1: 500, t2: 4000, t4: 5000 } });
    peer = await new UdpPeer().bind();
    port = stack.listening[0].port;
    seen.length = 0;
  });
  afterEach(async () => {
    peer.close();
    await stack.stop();
  });

  /** Send an ACK, let it be handled, then collect. */
  async function ackThenCollect(ack: string): Promise<void> {
    await peer.send(ack, port);
    await sleep(100);
    await collectGarbage();
  }

  /** Answer every request with `status` (INVITE: after a 180), the listeners the TU left holding `big`. */
  function answer(status: number): void {
    stack.on('request', (req, srv) => {
      const big = { payload: new Array(1000).fill(req.callId) };
      srv.on('timeout', () => big.payload.push('timeout'));
      if (srv.isInvite) srv.on('cancelled', () => big.payload.push('cancelled'));
      seen.push({ srv, req: new WeakRef(req), big: new WeakRef(big) });
      if (srv.isInvite) srv.respond(req.makeResponse(180, undefined, { toTag: 'uas-tag' }));
      const res = req.makeResponse(status, undefined, { toTag: 'uas-tag' });
      res.headers.set('Content-Type', 'text/plain');
      res.bodyText = `answer to ${req.callId}`;
      srv.respond(res);
    });
  }

  it('non-INVITE: after its final response the request and the TU listeners are released; a retransmission gets the same bytes', async () => {
    answer(200);
    const options = rawRequest('OPTIONS', '127.0.0.1', peer.port, port, { callId: 'settle-opt' });
    await peer.send(options, port);
    const [first] = await peer.waitFor((m) => m.length === 1);
    await collectGarbage();
    const { srv, req, big } = seen[0];
    expect(srv.state).to.equal('Completed');
    expect(req.deref(), 'request still held').to.equal(undefined);
    expect(big.deref(), 'TU listener still held').to.equal(undefined);
    expect(srv.holdsRequest).to.equal(false);
    expect(() => srv.request).to.throw(/settled/);
    expect(srv.finalSent).to.equal(true);
    expect(srv.lastResponse!.status).to.equal(200);
    expect(srv.lastResponse!.bodyText).to.equal('answer to settle-opt');

    await peer.send(options, port);
    const msgs = await peer.waitFor((m) => m.length === 2);
    expect(msgs[1].text).to.equal(first.text);
    expect(seen).to.have.length(1); // absorbed, not a new request
  });

  it('INVITE 2xx: released once the ACK is in, not before; a retransmitted INVITE gets the 2xx again; a late CANCEL changes nothing', async () => {
    answer(200);
    const invite = rawRequest('INVITE', '127.0.0.1', peer.port, port, { callId: 'settle-inv', branch: 'z9hG4bK-settle-inv' });
    await peer.send(invite, port);
    const msgs = await peer.waitFor((m) => firstLines(m).includes('SIP/2.0 200 OK'));
    const ok = msgs.find((m) => m.text.startsWith('SIP/2.0 200'))!;
    const { srv, req, big } = seen[0];
    // waiting for the ACK: the TU may still hear 'timeout' (Timer L), so everything is kept
    await collectGarbage();
    expect(srv.state).to.equal('Accepted');
    expect(req.deref(), 'request released before the ACK').to.not.equal(undefined);
    expect(big.deref()).to.not.equal(undefined);

    // a CANCEL after the final response: 200 with the 2xx's To tag, no 487, no 'cancelled' (RFC 3261 9.2)
    const cancel = invite.replace(/^INVITE /, 'CANCEL ').replace('CSeq: 1 INVITE', 'CSeq: 1 CANCEL');
    await peer.send(cancel, port);
    const afterCancel = await peer.waitFor((m) => m.some((x) => /^SIP\/2.0 200[\s\S]*CSeq: 1 CANCEL/.test(x.text)));
    const cancelOk = parseMessage(afterCancel.find((x) => /CSeq: 1 CANCEL/.test(x.text))!.text) as SipResponse;
    expect(cancelOk.toTag).to.equal('uas-tag');
    expect(big.deref()!.payload, 'cancelled after the final response').to.not.include('cancelled');

    const okRes = parseMessage(ok.text) as SipResponse;
    // the ACK for a 2xx is a transaction of its own (new branch), matched by Call-ID, CSeq and From tag
    const ack = rawRequest('ACK', '127.0.0.1', peer.port, port, { callId: 'settle-inv', toTag: okRes.toTag, branch: 'z9hG4bK-settle-ack' }).replace(
      /^From: .*$/m,
      `From: ${okRes.headers.get('From')}`,
    );
    await ackThenCollect(ack);
    expect(srv.state).to.equal('Accepted');
    expect(req.deref(), 'request still held after the ACK').to.equal(undefined);
    expect(big.deref(), 'TU listeners still held after the ACK').to.equal(undefined);

    const before = peer.received.length;
    await peer.send(invite, port);
    const again = await peer.waitFor((m) => m.length === before + 1);
    expect(again[before].text).to.equal(ok.text);
    // a CANCEL now: still 200 with the tag
    await peer.send(cancel, port);
    await sleep(200);
    expect(firstLines(peer.received).filter((l) => l.startsWith('SIP/2.0 487'))).to.have.length(0);
    expect(seen).to.have.length(1);
  });

  it('INVITE non-2xx: released once the ACK confirms it; a retransmitted INVITE is absorbed', async () => {
    answer(486);
    const invite = rawRequest('INVITE', '127.0.0.1', peer.port, port, { callId: 'settle-busy', branch: 'z9hG4bK-settle-busy' });
    await peer.send(invite, port);
    const msgs = await peer.waitFor((m) => firstLines(m).some((l) => l.startsWith('SIP/2.0 486')));
    const busy = parseMessage(msgs.find((m) => m.text.startsWith('SIP/2.0 486'))!.text) as SipResponse;
    const { srv, req } = seen[0];
    expect(srv.state).to.equal('Completed');
    // the ACK for a non-2xx is part of the INVITE's transaction: same branch
    const ack = invite
      .replace(/^INVITE /, 'ACK ')
      .replace('CSeq: 1 INVITE', 'CSeq: 1 ACK')
      .replace(/^To: .*$/m, `To: ${busy.headers.get('To')}`);
    await ackThenCollect(ack);
    expect(srv.state).to.equal('Confirmed');
    expect(req.deref(), 'request still held after the ACK').to.equal(undefined);
    const before = peer.received.length;
    await peer.send(invite, port);
    await sleep(200);
    expect(peer.received.length).to.equal(before);
  });
});
