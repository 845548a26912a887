// RFC 3261 17 timers over UDP, observed from a raw socket peer that drops or ignores messages.
import { expect } from 'chai';
import { parseMessage, SipRequest, SipResponse, SipStack } from '../../../sip-server/stack';
import { UdpPeer, firstLines, rawRequest, sleep, startStack } from './support';
import { buildInvite } from './test-uac';

const T1 = 50;
const T2 = 400;

/** Gaps between consecutive arrival times. */
function gaps(at: number[]): number[] {
  return at.slice(1).map((t, i) => t - at[i]);
}

/** Each gap within [0.5x, 2x + 60 ms] of the expected value (the 2-core machine is shared and busy). */
function expectSpacing(actual: number[], expected: number[]): void {
  expected.forEach((e, i) => {
    expect(actual[i], `gap ${i} of ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`).to.be.within(e * 0.5, e * 2 + 60);
  });
}

describe('transactions: UDP retransmission timers', function () {
  this.timeout(30_000);
  let stack: SipStack;
  let peer: UdpPeer;
  beforeEach(async () => {
    stack = await startStack({ timers: { t1: T1, t2: T2, t4: 200 } });
    peer = await new UdpPeer().bind();
  });
  afterEach(async () => {
    peer.close();
    await stack.stop();
  });

  it('Timer A doubles INVITE retransmissions from T1; a 1xx stops them; a non-2xx final is ACKed by the transaction', async () => {
    const tx = stack.request(buildInvite(stack, `sip:bob@127.0.0.1:${peer.port}`));
    const finals: SipResponse[] = [];
    tx.on('final', (r: SipResponse) => finals.push(r));
    // the peer drops the first four copies
    const msgs = await peer.waitFor((m) => m.length >= 5, 5000);
    expectSpacing(gaps(msgs.slice(0, 5).map((m) => m.at)), [T1, 2 * T1, 4 * T1, 8 * T1]);
    const invite = parseMessage(msgs[0].text) as SipRequest;
    expect(msgs.every((m) => m.text === msgs[0].text)).to.equal(true); // identical retransmissions
    const trying = invite.makeResponse(100);
    await peer.send(trying.toBuffer(), stack.listening[0].port);
    await sleep(20 * T1 > 1000 ? 1000 : 20 * T1);
    const count = peer.received.length;
    await sleep(600);
    expect(peer.received.length, 'no retransmission after 100').to.equal(count);
    const busy = invite.makeResponse(486, undefined, { toTag: 'uas1' });
    await peer.send(busy.toBuffer(), stack.listening[0].port);
    const all = await peer.waitFor((m) => m.some((x) => x.text.startsWith('ACK ')));
    const ack = parseMessage(all.find((x) => x.text.startsWith('ACK '))!.text) as SipRequest;
    expect(ack.topVia!.branch).to.equal(invite.topVia!.branch);
    expect(ack.toTag).to.equal('uas1');
    expect(ack.uri).to.equal(invite.uri);
    expect(ack.cseq).to.deep.equal({ seq: invite.cseq.seq, method: 'ACK' });
    expect(finals.map((f) => f.status)).to.deep.equal([486]);
    // a retransmitted 486 gets the same ACK again and is not reported twice
    await peer.send(busy.toBuffer(), stack.listening[0].port);
    await peer.waitFor((m) => m.filter((x) => x.text.startsWith('ACK ')).length === 2);
    expect(finals).to.have.length(1);
  });

  it('Timer E doubles non-INVITE retransmissions up to T2; Timer F ends with timeout after 64*T1', async () => {
    const stack2 = await startStack({ timers: { t1: 60, t2: 240, t4: 100 } });
    try {
      const req = buildInvite(stack2, `sip:bob@127.0.0.1:${peer.port}`);
      req.method = 'OPTIONS';
      req.headers.set('CSeq', '1 OPTIONS');
      const started = Date.now();
      const tx = stack2.request(req);
      const timedOut = new Promise<number>((r) => tx.on('timeout', () => r(Date.now() - started)));
      const msgs = await peer.waitFor((m) => m.length >= 7, 5000);
      expectSpacing(gaps(msgs.slice(0, 7).map((m) => m.at)), [60, 120, 240, 240, 240, 240]);
      const after = await timedOut;
      expect(after).to.be.within(64 * 60 * 0.9, 64 * 60 + 1000);
      expect(tx.state).to.equal('Terminated');
    } finally {
      await stack2.stop();
    }
  });

  it('Timer G retransmits a non-2xx final from T1 up to T2 until the ACK; INVITE retransmissions get the last response', async () => {
    stack.on('request', (req, srv) => {
      srv.respond(req.makeResponse(486, undefined, { toTag: 'busy' }));
    });
    const port = stack.listening[0].port;
    const text = rawRequest('INVITE', '127.0.0.1', peer.port, port);
    await peer.send(text, port);
    const msgs = await peer.waitFor((m) => m.filter((x) => x.text.startsWith('SIP/2.0 486')).length >= 5, 5000);
    const finals = msgs.filter((x) => x.text.startsWith('SIP/2.0 486'));
    // answered at once: no 100 (Trying) first (RFC 3261 17.2.1)
    expect(firstLines(msgs)[0]).to.equal('SIP/2.0 486 Busy Here');
    expectSpacing(gaps(finals.map((m) => m.at)), [T1, 2 * T1, 4 * T1, T2]);
    // INVITE retransmission: the 486 is sent again at once
    const before = peer.received.length;
    await peer.send(text, port);
    await peer.waitFor((m) => m.length > before);
    // ACK stops Timer G
    const inv = parseMessage(text) as SipRequest;
    const ack = text
      .replace(/^INVITE /, 'ACK ')
      .replace('CSeq: 1 INVITE', 'CSeq: 1 ACK')
      .replace(/To: (.*)\r\n/, `To: $1;tag=busy\r\n`);
    expect(inv.method).to.equal('INVITE');
    await peer.send(ack, port);
    await sleep(100);
    const settled = peer.received.length;
    await sleep(3 * T2);
    expect(peer.received.length, 'no 486 after the ACK').to.equal(settled);
  });

  it('100 (Trying) goes out only for an INVITE the TU has not answered within 200 ms', async () => {
    const port = stack.listening[0].port;
    stack.on('request', (req, srv) => {
      const delay = req.callId.startsWith('slow') ? 600 : 20;
      setTimeout(() => srv.respond(req.makeResponse(180, undefined, { toTag: 'uas' })), delay);
    });
    const sent = Date.now();
    await peer.send(rawRequest('INVITE', '127.0.0.1', peer.port, port, { callId: 'slow-1' }), port);
    const slow = await peer.waitFor((m) => m.some((x) => x.text.startsWith('SIP/2.0 180')), 3000);
    expect(firstLines(slow)).to.deep.equal(['SIP/2.0 100 Trying', 'SIP/2.0 180 Ringing']);
    expect(slow[0].at - sent, '100 after about 200 ms').to.be.within(150, 550);
    peer.received.length = 0;
    await peer.send(rawRequest('INVITE', '127.0.0.1', peer.port, port, { callId: 'fast-1' }), port);
    await peer.waitFor((m) => m.some((x) => x.text.startsWith('SIP/2.0 180')), 3000);
    await sleep(400);
    expect(firstLines(peer.received)).to.deep.equal(['SIP/2.0 180 Ringing']);
  });

  it('Timer H: without an ACK the INVITE server transaction times out after 64*T1', async () => {
    const stack2 = await startStack({ timers: { t1: 20, t2: 160, t4: 100 } });
    try {
      const timeouts: number[] = [];
      const started = Date.now();
      stack2.on('request', (req, srv) => {
        srv.on('timeout', () => timeouts.push(Date.now() - started));
        srv.respond(req.makeResponse(404));
      });
      await peer.send(rawRequest('INVITE', '127.0.0.1', peer.port, stack2.listening[0].port), stack2.listening[0].port);
      await sleep(64 * 20 + 600);
      expect(timeouts).to.have.length(1);
      expect(timeouts[0]).to.be.within(64 * 20 * 0.9, 64 * 20 + 500);
    } finally {
      await stack2.stop();
    }
  });

  it('a 2xx to INVITE is retransmitted until the ACK arrives, and the ACK reaches the TU once', async () => {
    const acks: SipRequest[] = [];
    stack.on('request', (req, srv) => {
      const res = req.makeResponse(200, undefined, { toTag: 'ok1' });
      res.headers.set('Contact', `<${stack.localUri()}>`);
      srv.respond(res);
    });
    stack.on('ack', (ack) => acks.push(ack));
    const port = stack.listening[0].port;
    const text = rawRequest('INVITE', '127.0.0.1', peer.port, port);
    await peer.send(text, port);
    const msgs = await peer.waitFor((m) => m.filter((x) => x.text.startsWith('SIP/2.0 200')).length >= 3, 5000);
    const oks = msgs.filter((x) => x.text.startsWith('SIP/2.0 200'));
    expectSpacing(gaps(oks.map((m) => m.at)), [T1, 2 * T1]);
    const ack = text
      .replace(/^INVITE /, 'ACK ')
      .replace('CSeq: 1 INVITE', 'CSeq: 1 ACK')
      .replace(/branch=[^;\r\n]+/, 'branch=z9hG4bK-ack-new')
      .replace(/To: (.*)\r\n/, `To: $1;tag=ok1\r\n`);
    await peer.send(ack, port);
    await peer.send(ack, port);
    await sleep(100);
    const settled = peer.received.length;
    await sleep(3 * T2);
    expect(peer.received.length, 'no 200 after the ACK').to.equal(settled);
    expect(acks).to.have.length(1);
  });

  it('an INVITE whose first copies are lost still completes (peer drops the first 2 INVITEs, then answers 200)', async () => {
    const tx = stack.request(buildInvite(stack, `sip:bob@127.0.0.1:${peer.port}`));
    const final = new Promise<SipResponse>((r) => tx.on('final', r));
    const msgs = await peer.waitFor((m) => m.length >= 3);
    const invite = parseMessage(msgs[2].text) as SipRequest;
    const ok = invite.makeResponse(200, undefined, { toTag: 'late' });
    ok.headers.set('Contact', `<sip:bob@127.0.0.1:${peer.port}>`);
    await peer.send(ok.toBuffer(), stack.listening[0].port);
    expect((await final).status).to.equal(200);
    expect(tx.state).to.equal('Accepted');
  });
});
