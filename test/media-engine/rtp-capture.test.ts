/**
 * A leg's RTP capture in the engine (issue 38, "RTP in the pcap"): two real endpoints send each other
 * PCMU over loopback; one captures. Records carry the datagrams' real addresses, ports and wire
 * lengths; headers-only mode keeps the 12-byte RTP header and whole RTCP; the capture stops at its
 * bound; a leg without a capture has none; bad bounds are refused.
 */
import { expect } from 'chai';
import dgram from 'node:dgram';
import { type MediaServer } from '../../media-engine';
import { parseRtpCapture } from '../../core/media/rtp-capture';
import { endpointPair, sleep, useMediaServer } from '../../testkit/media-engine/support';

describe('media-engine RTP capture', function () {
  this.timeout(60_000);
  let ms: MediaServer;
  useMediaServer({ ports: 20, workers: 1 }, (f) => (ms = f.ms));

  it('headers-only: RTP cut after its header, RTCP whole, real ports and lengths, both directions, bounded', async () => {
    const { a, b, destroy } = await endpointPair(ms);
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    try {
      expect(await a.takeRtpCapture(), 'no capture started').to.equal(null);
      await a.captureRtp({ maxPackets: 120, headersOnly: true });
      // an RTCP packet from elsewhere on A's RTCP port: captured whole with its source
      const rr = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 9]);
      await new Promise<void>((r) => sock.send(rr, a.local.port + 1, '127.0.0.1', () => r()));
      await sleep(2500);
      const recs = parseRtpCapture(Buffer.from((await a.takeRtpCapture())!));
      expect(recs.length, 'the bound').to.equal(120);
      const inbound = recs.filter((r) => r.srcPort === b.local.port && r.dstPort === a.local.port);
      const outbound = recs.filter((r) => r.srcPort === a.local.port && r.dstPort === b.local.port);
      expect(inbound.length).to.be.greaterThan(40);
      expect(outbound.length).to.be.greaterThan(40);
      for (const r of [...inbound, ...outbound]) {
        expect(r).to.deep.include({ srcIp: '127.0.0.1', dstIp: '127.0.0.1', length: 172 });
        expect(r.bytes.length, 'headers only').to.equal(12);
        expect(r.bytes[0]! >> 6).to.equal(2);
      }
      const seqs = outbound.map((r) => r.bytes.readUInt16BE(2));
      expect(seqs.slice(1).every((q, i) => q === ((seqs[i]! + 1) & 0xffff))).to.equal(true);
      const sent = recs.find((r) => r.srcPort === sock.address().port);
      expect(sent, 'the RTCP from elsewhere').to.not.equal(undefined);
      expect(sent!.dstPort).to.equal(a.local.port + 1);
      expect(sent!.bytes.equals(rr)).to.equal(true);
      // times: epoch microseconds, in order per direction
      const now = Date.now() * 1000;
      expect(recs.every((r) => r.us > now - 10_000_000 && r.us <= now)).to.equal(true);
      expect(await b.takeRtpCapture(), 'the other leg captures nothing').to.equal(null);
    } finally {
      sock.close();
      await destroy();
    }
  });

  it('full mode keeps whole packets; a bad bound is refused', async () => {
    const { a, destroy } = await endpointPair(ms);
    try {
      let err: Error | null = null;
      await a.captureRtp({ maxPackets: 0, headersOnly: false }).catch((e: Error) => (err = e));
      expect(String(err)).to.match(/maxPackets/);
      await a.captureRtp({ maxPackets: 1000, headersOnly: false });
      await sleep(600);
      const recs = parseRtpCapture(Buffer.from((await a.takeRtpCapture())!));
      const rtp = recs.filter((r) => r.length === 172);
      expect(rtp.length).to.be.greaterThan(20);
      expect(rtp.every((r) => r.bytes.length === 172)).to.equal(true);
    } finally {
      await destroy();
    }
  });
});
