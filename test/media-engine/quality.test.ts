/**
 * Per-leg receive statistics and RTCP for call quality (issue 38): sequence tracking (out of order,
 * duplicates, wrap), RTCP-XR VoIP metrics, RTT from LSR/DLSR, malformed RTCP ignored; and two real
 * engine endpoints talking through the lossy relay (testkit/lossy-relay/).
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { type Endpoint, type MediaServer } from '../../media-engine';
import { ReceiveStats } from '../../media-engine/rtp-packet/receive-stats';
import { ntpFromMs, ntpMiddle, parseRtcp, roundTripMs, serializeReceiverReport, serializeSenderReport, serializeVoipMetricsXr, type VoipMetrics } from '../../media-engine/rtp-packet/rtcp';
import { LossyRelay } from '../../testkit/lossy-relay';
import { endpointPair, sleep, useMediaServer } from '../../testkit/media-engine/support';

const withPort = (sdp: string, port: number) => sdp.replace(/m=audio \d+/, `m=audio ${port}`);

describe('media-engine call quality: receive statistics and RTCP', function () {
  this.timeout(60000);

  describe('ReceiveStats', () => {
    const feed = (s: ReceiveStats, seqs: number[]) => seqs.forEach((q, i) => s.onPacket(7, q & 0xffff, i * 160, i * 160));

    it('counts losses, packets out of order and duplicates, across the sequence wrap', () => {
      const s = new ReceiveStats();
      // 65530..65535, 0..9 with 3 lost (65533, 2, 5), 65535 and 7 late, 1 and 8 twice
      feed(s, [65530, 65531, 65532, 65534, 0, 65535, 1, 1, 3, 4, 6, 8, 7, 8, 9]);
      expect(s.expected).to.equal(16);
      expect(s.received).to.equal(13);
      expect(s.lost).to.equal(3);
      expect(s.outOfOrder).to.equal(2);
      expect(s.duplicates).to.equal(2);
      expect(s.extendedMax).to.equal(0x10000 + 9);
    });

    it('a packet far behind (older than the window) is out of order, not a duplicate; a new SSRC starts over', () => {
      const s = new ReceiveStats();
      feed(s, [100, 101, 400, 100 + 128 * 3]);
      expect(s.duplicates).to.equal(0);
      s.onPacket(8, 5, 0, 0);
      expect(s.received).to.equal(1);
      expect(s.outOfOrder).to.equal(0);
    });
  });

  describe('RTCP', () => {
    const xr: VoipMetrics = { ssrc: 0x1234, lossRate: 13, discardRate: 2, roundTripDelayMs: 120, endSystemDelayMs: 60, rFactor: 80, mosLq: 3.9, mosCq: 3.8, jbNominalMs: 40 };

    it('parses an RTCP-XR VoIP metrics block (RFC 3611 §4.7) in a compound packet, skipping other block types', () => {
      const other = Buffer.from([0x80, 207, 0, 4, 0, 0, 0, 9, /* block type 4 */ 4, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8]);
      const pkts = parseRtcp(Buffer.concat([serializeReceiverReport(9, []), serializeVoipMetricsXr(9, xr), other]))!;
      expect(pkts.map((p) => p.type)).to.deep.equal(['RR', 'XR', 'XR']);
      expect(pkts[1]).to.deep.equal({ type: 'XR', ssrc: 9, voip: [xr] });
      expect(pkts[2]).to.deep.equal({ type: 'XR', ssrc: 9, voip: [] });
    });

    it('RTT = arrival − LSR − DLSR, in ms; none without LSR or when implausible', () => {
      const sentAt = 1_700_000_000_000;
      const lsr = ntpMiddle(ntpFromMs(sentAt));
      const dlsr = Math.round(0.25 * 65536); // the far end held our SR 250 ms
      expect(roundTripMs({ lsr, dlsr }, sentAt + 250 + 80)).to.be.closeTo(80, 0.1);
      expect(roundTripMs({ lsr: 0, dlsr: 0 }, sentAt)).to.equal(null);
      expect(roundTripMs({ lsr, dlsr }, sentAt + 100)).to.equal(null); // negative
      expect(roundTripMs({ lsr, dlsr: 0 }, sentAt + 120_000)).to.equal(null); // two minutes
    });

    it('malformed shapes never throw: null or the packets that parse', () => {
      const sr = serializeSenderReport(1, { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 }, [
        { ssrc: 2, fractionLost: 1, cumulativeLost: 1, highestSeq: 1, jitter: 1, lsr: 0, dlsr: 0 },
      ]);
      const voip = serializeVoipMetricsXr(3, xr);
      const shapes: Buffer[] = [
        Buffer.alloc(0),
        Buffer.from([0x80]),
        Buffer.from([0x40, 200, 0, 1, 0, 0, 0, 0]), // version 1
        Buffer.from([0x80, 200, 0xff, 0xff, 0, 0, 0, 0]), // length past the end
        Buffer.from([0x9f, 201, 0, 1, 0, 0, 0, 1]), // 31 report blocks announced, none there
        sr.subarray(0, sr.length - 4),
        Buffer.concat([voip.subarray(0, 8), Buffer.from([7, 0, 0, 20])]), // XR block longer than the packet
        Buffer.from([0x80, 207, 0, 2, 0, 0, 0, 1, 7, 0, 0, 0]), // VoIP metrics block too short
        Buffer.from([0x80, 207, 0, 0]), // XR without its SSRC
      ];
      let seed = 7;
      for (let i = 0; i < 300; i++) {
        const b = Buffer.alloc(1 + (i % 90));
        for (let k = 0; k < b.length; k++) b[k] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
        if (i % 2) b[0] = 0x80 | (b[0] & 0x1f); // a valid first byte, the rest random
        if (i % 3 === 0) b[1] = 200 + (i % 8);
        shapes.push(b);
      }
      for (const s of shapes.slice(0, 9)) expect(parseRtcp(s), s.toString('hex')).to.equal(null);
      for (const s of shapes) expect(() => parseRtcp(s)).to.not.throw();
    });
  });

  describe('two endpoints through the lossy relay', () => {
    let ms: MediaServer;
    useMediaServer({ ports: 100, workers: 1 }, (f) => ({ ms } = f));

    async function throughRelay(relay: LossyRelay): Promise<[Endpoint, Endpoint]> {
      const a = await ms.createEndpoint();
      const b = await ms.createEndpoint({ remoteSdp: withPort(a.local.sdp, relay.far.rtpPort), near: a });
      await a.modify(withPort(b.local.sdp, relay.near.rtpPort));
      await relay.setNearPeer('127.0.0.1', a.local.port);
      await relay.setFarPeer('127.0.0.1', b.local.port);
      return [a, b];
    }

    it('3 % loss and 40 ms jitter injected: B counts the loss exactly, jitter ≈ 40 ms, reordering; both measure RTT from RTCP', async () => {
      const relay = await LossyRelay.open({ toFar: { lossPct: 3, jitterMs: 40 }, seed: 38 });
      const [a, b] = await throughRelay(relay);
      try {
        // each side measures its RTT once a report of the other's answers one of its own SRs: with reports
        // every 2.5-7.5 s (RFC 3550 §6.3.1) B can have its RTT while A's first SR is still unanswered, so
        // wait for both
        let sb = await b.getStats();
        let rttA = (await a.getStats()).rtcp.rttMs;
        const deadline = Date.now() + 30000;
        while (Date.now() < deadline && (sb.rtcp.rttMs === null || rttA === null || sb.packetsExpected < 500)) {
          await sleep(500);
          sb = await b.getStats();
          rttA = (await a.getStats()).rtcp.rttMs;
        }
        await relay.hold();
        await sleep(100);
        sb = await b.getStats();
        const sa = await a.getStats();
        const c = relay.counts.toFar;
        // the relay's counts, but for drops B cannot see: after the last packet it got, and before the first
        // one (RFC 3550 A.3 counts from the first sequence number received, and the jitter reorders the start)
        expect(sb.packetsExpected, 'expected = what A sent through the relay').to.be.within(c.forwarded + c.dropped - 4, c.forwarded + c.dropped);
        expect(sb.packetsReceived).to.equal(c.forwarded);
        expect(sb.lost, 'lost = dropped by the relay').to.be.within(c.dropped - 4, c.dropped);
        expect((100 * sb.lost) / sb.packetsExpected).to.be.closeTo(3, 0.5);
        expect(sb.jitterMs, 'RFC 3550 jitter').to.be.within(28, 55);
        expect(sb.outOfOrder, 'delays of up to 120 ms reorder 20 ms packets').to.be.greaterThan(20);
        expect(sb.duplicates).to.equal(0);
        // RTCP is not delayed: the RTT is the two engines' turnaround on loopback, a few ms, up to a
        // scheduler's delay on a loaded CI machine (a miscount of DLSR/LSR gives seconds or a negative)
        expect(sb.rtcp.rttMs, 'RTT at B').to.be.within(0, 150);
        expect(sa.rtcp.rttMs, 'RTT at A').to.be.within(0, 150);
        // A hears from B's RTCP what B saw of A's stream: an earlier snapshot of B's moving estimate (the
        // scheduler's delays add to it on a loaded machine); a unit slip (samples vs ms) lands at 5 or 320
        expect(sa.rtcp.lastReportOnUs!.jitter / 8).to.be.within(10, 80);
        expect(sa.lost, 'nothing lost the other way').to.equal(0);
      } finally {
        await relay.close();
        await a.destroy();
        await b.destroy();
      }
    });

    it('malformed RTCP at an endpoint is counted and ignored; an XR from the far end is kept', async () => {
      const { a, b, destroy } = await endpointPair(ms);
      const sock = dgram.createSocket('udp4');
      await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
      try {
        await sleep(300);
        const before = await b.getStats();
        const send = (buf: Buffer) => new Promise<void>((r) => sock.send(buf, b.local.port + 1, '127.0.0.1', () => r()));
        const bad = [Buffer.from([0x80]), Buffer.from([0x80, 200, 0xff, 0xff, 0, 0, 0, 0]), Buffer.from([0x80, 207, 0, 2, 0, 0, 0, 1, 7, 0, 0, 0]), Buffer.from('not rtcp at all')];
        for (const x of bad) await send(x);
        // an XR about B's stream: B's SSRC is what A saw (A's report blocks name it)
        let sa = await a.getStats();
        const deadline = Date.now() + 10000;
        while (!sa.rtcp.lastSender && Date.now() < deadline) {
          await sleep(250);
          sa = await a.getStats();
        }
        const bSsrc = sa.rtcp.lastSender!.ssrc;
        await send(serializeVoipMetricsXr(5, { ssrc: bSsrc, lossRate: 0, discardRate: 0, roundTripDelayMs: 10, endSystemDelayMs: 40, rFactor: 92, mosLq: 4.2, mosCq: 4.1, jbNominalMs: 40 }));
        await sleep(600); // RTCP is read every 10 receive ticks
        const after = await b.getStats();
        expect(after.rtcp.malformed - before.rtcp.malformed).to.equal(bad.length);
        expect(after.rtcp.voipMetrics).to.deep.include({ ssrc: bSsrc, rFactor: 92, mosLq: 4.2 });
        expect(after.packetsReceived).to.be.greaterThan(before.packetsReceived + 10);
      } finally {
        sock.close();
        await destroy();
      }
    });
  });
});
