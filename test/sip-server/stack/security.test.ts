// Scanner drop, per-source flood ban, transaction cap, and malformed input while calls run.
import { expect } from 'chai';
import { SipStack } from '../../../sip-server/stack';
import { sipRegistry } from '../../../sip-server/metrics';
import { freePort } from '../../../testkit/ports';
import { UdpPeer, firstLines, rawRequest, runSipp, sleep, startStack } from './support';
import { attachTestUas } from './test-uas';

async function optionsAnswered(peer: UdpPeer, port: number, headers: string[] = [], waitMs = 600): Promise<boolean> {
  // Match the answer by Call-ID: late answers to earlier (flood) requests must not count.
  const callId = `probe-${Math.random().toString(36).slice(2)}`;
  await peer.send(rawRequest('OPTIONS', peer.host, peer.port, port, { headers, callId }), port);
  try {
    await peer.waitFor((m) => m.some((x) => x.text.includes(`Call-ID: ${callId}`)), waitMs);
    return true;
  } catch {
    return false;
  }
}

describe('security: scanners, floods, transaction cap, malformed input', function () {
  this.timeout(60_000);
  let stack: SipStack;
  afterEach(async () => {
    await stack.stop();
  });

  it('drops requests from known scanner User-Agents and still answers others', async () => {
    stack = await startStack();
    attachTestUas(stack);
    const peer = await new UdpPeer('127.0.0.1').bind();
    try {
      const port = stack.listening[0].port;
      for (const ua of ['friendly-scanner', 'sipvicious 0.3', 'SIPCLI/v1.8', 'VaxSIPUserAgent/3.1', 'sundayddr', 'pplsip', 'iWar']) {
        expect(await optionsAnswered(peer, port, [`User-Agent: ${ua}`], 300), ua).to.equal(false);
      }
      expect(await optionsAnswered(peer, port, ['User-Agent: Linphone/5.2'])).to.equal(true);
      const metrics = await sipRegistry.getSingleMetricAsString('sip_dropped_total');
      expect(metrics).to.match(/reason="scanner"\} [1-9]/);
    } finally {
      peer.close();
    }
  });

  it('bans a source flooding at ~1000 req/s within ~2 s while another source keeps being served', async () => {
    stack = await startStack({ security: { rateLimit: { requestsPerSecond: 50, burst: 100, banThreshold: 200, banSeconds: 30 } } });
    attachTestUas(stack);
    const port = stack.listening[0].port;
    const flooder = await new UdpPeer('127.0.0.5').bind();
    const good = await new UdpPeer('127.0.0.6').bind();
    try {
      // The metrics registry is shared by every suite in this process: count bans from here on.
      const bansSoFar = async () => Number(/sip_bans_total (\d+)/.exec(await sipRegistry.getSingleMetricAsString('sip_bans_total'))?.[1] ?? 0);
      const bansBefore = await bansSoFar();
      const started = Date.now();
      let bannedAt = 0;
      // 1000 req/s in 10 ms batches, for at most 2.5 s
      for (let i = 0; i < 250 && !bannedAt; i++) {
        for (let j = 0; j < 10; j++) await flooder.send(rawRequest('OPTIONS', flooder.host, flooder.port, port), port);
        await sleep(10);
        if (i % 10 === 9) {
          if ((await bansSoFar()) > bansBefore) bannedAt = Date.now() - started;
        }
      }
      expect(bannedAt, 'banned').to.be.greaterThan(0);
      expect(bannedAt).to.be.lessThan(2500);
      await sleep(100);
      expect(await optionsAnswered(flooder, port), 'banned source is dropped').to.equal(false);
      expect(await optionsAnswered(good, port), 'other source still served').to.equal(true);
    } finally {
      flooder.close();
      good.close();
    }
  });

  it('the allow-list exempts a source from the ban', async () => {
    stack = await startStack({ security: { allowlist: ['127.0.0.7'], rateLimit: { requestsPerSecond: 5, burst: 5, banThreshold: 5, banSeconds: 30 } } });
    attachTestUas(stack);
    const port = stack.listening[0].port;
    const peer = await new UdpPeer('127.0.0.7').bind();
    try {
      for (let i = 0; i < 60; i++) await peer.send(rawRequest('OPTIONS', peer.host, peer.port, port), port);
      await sleep(200);
      expect(await optionsAnswered(peer, port)).to.equal(true);
    } finally {
      peer.close();
    }
  });

  it('over the concurrent transaction cap new requests get 503 with Retry-After; in-dialog requests still pass', async () => {
    stack = await startStack({ limits: { maxServerTransactions: 5 } });
    const held: unknown[] = [];
    stack.on('request', (req, srv) => {
      if (req.toTag) srv.respond(req.makeResponse(200));
      else held.push(srv); // never answered: stays in flight
    });
    const peer = await new UdpPeer().bind();
    try {
      const port = stack.listening[0].port;
      for (let i = 0; i < 8; i++) await peer.send(rawRequest('MESSAGE', '127.0.0.1', peer.port, port), port);
      const msgs = await peer.waitFor((m) => m.length >= 3);
      await sleep(100);
      expect(held).to.have.length(5);
      expect(firstLines(msgs).filter((l) => l.startsWith('SIP/2.0 503'))).to.have.length(3);
      expect(msgs[0].text).to.match(/\r\nRetry-After: \d+\r\n/);
      const before = peer.received.length;
      await peer.send(rawRequest('BYE', '127.0.0.1', peer.port, port, { toTag: 'dlg1' }), port);
      const after = await peer.waitFor((m) => m.length > before);
      expect(firstLines(after.slice(before))[0]).to.equal('SIP/2.0 200 OK');
      // unanswered non-INVITE transactions end after 64*T1, freeing the cap
      await sleep(64 * 50 + 400);
      expect(stack.transactionCounts.server).to.equal(0);
      await peer.send(rawRequest('MESSAGE', '127.0.0.1', peer.port, port), port);
      await sleep(100);
      expect(held).to.have.length(6);
    } finally {
      peer.close();
    }
  });

  it('Max-Forwards 0 gets 483 (except OPTIONS); a request looping back through us gets 482', async () => {
    stack = await startStack();
    attachTestUas(stack);
    const peer = await new UdpPeer().bind();
    try {
      const port = stack.listening[0].port;
      await peer.send(rawRequest('MESSAGE', '127.0.0.1', peer.port, port).replace('Max-Forwards: 70', 'Max-Forwards: 0'), port);
      await peer.waitFor((m) => firstLines(m).includes('SIP/2.0 483 Too Many Hops'));
      // merged request: same From tag, Call-ID and CSeq, different branch, while the first is in progress
      const a = rawRequest('MESSAGE', '127.0.0.1', peer.port, port, { callId: 'merge-1', branch: 'z9hG4bK-m1' });
      const b = a.replace('z9hG4bK-m1', 'z9hG4bK-m2');
      stack.removeAllListeners('request');
      stack.on('request', () => undefined); // hold the first one open
      await peer.send(a, port);
      await sleep(50);
      await peer.send(b, port);
      await peer.waitFor((m) => firstLines(m).some((l) => l.startsWith('SIP/2.0 482')));
    } finally {
      peer.close();
    }
  });

  it('a burst of malformed datagrams during a call: the call completes, 400s go out where possible, OPTIONS still answered', async () => {
    stack = await startStack({ timers: { t1: 500, t2: 4000, t4: 5000 } });
    attachTestUas(stack);
    const port = stack.listening[0].port;
    const sp = await freePort();
    const sipp = runSipp(['-sn', 'uac', `127.0.0.1:${port}`, '-i', '127.0.0.1', '-p', String(sp), '-m', '3', '-r', '3', '-d', '1500', '-timeout', '30s', '-timeout_error']);
    const junk = await new UdpPeer('127.0.0.9').bind();
    const good = await new UdpPeer('127.0.0.10').bind();
    try {
      await sleep(200);
      const valid = rawRequest('INVITE', junk.host, junk.port, port);
      const variants = [
        Buffer.from('garbage\r\n\r\n'),
        Buffer.alloc(0),
        Buffer.from('\r\n\r\n'),
        Buffer.alloc(1400, 0xff),
        Buffer.from(valid.replace('SIP/2.0\r\n', 'SIP/2.0 \r\n')),
        Buffer.from(valid.replace('Content-Length: 0', 'Content-Length: 99999')),
        Buffer.from(valid.replace(/Via: [^\r]*/, 'Via: ;;,,')),
        Buffer.from(valid.slice(0, 60)),
        Buffer.from(valid.replace('INVITE sip:', 'INVITE <sip:')),
        Buffer.from('INVITE sip:x SIP/2.0\r\n' + 'X: y\r\n'.repeat(400) + '\r\n'),
      ];
      for (let i = 0; i < 300; i++) await junk.send(variants[i % variants.length], port);
      expect(await optionsAnswered(good, port)).to.equal(true);
      const r = await sipp;
      expect(r.code, r.errors + r.stderr).to.equal(0);
      expect(firstLines(junk.received).some((l) => l.startsWith('SIP/2.0 400'))).to.equal(true);
      const m = await sipRegistry.getSingleMetricAsString('sip_parse_errors_total');
      expect(m).to.match(/transport="udp"\} [1-9]/);
    } finally {
      junk.close();
      good.close();
    }
  });
});
