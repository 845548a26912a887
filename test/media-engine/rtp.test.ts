import { expect } from 'chai';
import { isRtcp, parseRtp, serializeRtp, seqDiff } from '../../media-engine/rtp-packet/packet';
import { parseRtcp, serializeBye, serializeReceiverReport, serializeSenderReport } from '../../media-engine/rtp-packet/rtcp';
import { ReceiveStats } from '../../media-engine/rtp-packet/receive-stats';

describe('media-engine RTP packets', () => {
  it('round trips a plain packet', () => {
    const buf = serializeRtp({ payloadType: 0, sequenceNumber: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, marker: true, payload: new Uint8Array([1, 2, 3]) });
    expect(buf.length).to.equal(15);
    const p = parseRtp(buf)!;
    expect(p).to.include({ payloadType: 0, sequenceNumber: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, marker: true, padding: 0 });
    expect(Array.from(p.payload)).to.deep.equal([1, 2, 3]);
  });

  it('round trips CSRCs, a header extension and padding', () => {
    const buf = serializeRtp({
      payloadType: 8,
      sequenceNumber: 7,
      timestamp: 160,
      ssrc: 1,
      csrcs: [10, 20, 30],
      extension: { profile: 0xbede, data: new Uint8Array([0x10, 0xaa, 0, 0]) },
      padding: 4,
      payload: new Uint8Array([9, 9]),
    });
    expect(buf.length).to.equal(12 + 12 + 8 + 2 + 4);
    expect(buf[0] & 0x20).to.not.equal(0);
    const p = parseRtp(buf)!;
    expect(p.csrcs).to.deep.equal([10, 20, 30]);
    expect(p.extension!.profile).to.equal(0xbede);
    expect(Array.from(p.extension!.data)).to.deep.equal([0x10, 0xaa, 0, 0]);
    expect(p.padding).to.equal(4);
    expect(Array.from(p.payload)).to.deep.equal([9, 9]);
  });

  it('rejects truncated and malformed packets', () => {
    expect(parseRtp(new Uint8Array(11))).to.equal(null);
    const v1 = serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(4) });
    v1[0] = 0x40; // version 1
    expect(parseRtp(v1)).to.equal(null);
    const cc = serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(0) });
    cc[0] |= 0x03; // claims 3 CSRCs that are not there
    expect(parseRtp(cc)).to.equal(null);
    const pad = serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(2) });
    pad[0] |= 0x20;
    pad[pad.length - 1] = 200; // padding longer than the packet
    expect(parseRtp(pad)).to.equal(null);
    const ext = serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(0) });
    ext[0] |= 0x10; // extension bit without the extension header
    expect(parseRtp(ext)).to.equal(null);
    expect(() => serializeRtp({ payloadType: 200, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(0) })).to.throw(RangeError);
  });

  it('tells RTCP from RTP and computes sequence distance across the wrap', () => {
    expect(isRtcp(serializeReceiverReport(1, []))).to.equal(true);
    expect(isRtcp(serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(160) }))).to.equal(false);
    expect(seqDiff(2, 65534)).to.equal(4);
    expect(seqDiff(65534, 2)).to.equal(-4);
  });
});

describe('media-engine RTCP', () => {
  const block = { ssrc: 99, fractionLost: 12, cumulativeLost: -3, highestSeq: 70000, jitter: 40, lsr: 0x12345678, dlsr: 65536 };

  it('round trips a compound SR + BYE', () => {
    const sr = serializeSenderReport(5, { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 }, [block]);
    const pkts = parseRtcp(Buffer.concat([sr, serializeBye([5])]))!;
    expect(pkts).to.have.length(2);
    expect(pkts[0]).to.deep.equal({ type: 'SR', ssrc: 5, sender: { ntpSec: 1, ntpFrac: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5 }, reports: [block] });
    expect(pkts[1]).to.deep.equal({ type: 'BYE', ssrcs: [5] });
  });

  it('round trips an RR and rejects bad framing', () => {
    const rr = serializeReceiverReport(7, [block]);
    expect(parseRtcp(rr)).to.deep.equal([{ type: 'RR', ssrc: 7, reports: [block] }]);
    expect(parseRtcp(rr.subarray(0, rr.length - 4))).to.equal(null);
    const bad = Buffer.from(rr);
    bad[0] = 0x00;
    expect(parseRtcp(bad)).to.equal(null);
  });

  it('counts loss and sequence cycles for report blocks', () => {
    const s = new ReceiveStats();
    let seq = 65530;
    for (let i = 0; i < 20; i++) {
      if (i !== 5 && i !== 6) s.onPacket(1, seq & 0xffff, i * 160, i * 160);
      seq++;
    }
    const rb = s.reportBlock(Date.now())!;
    expect(rb.cumulativeLost).to.equal(2);
    expect(rb.highestSeq).to.equal(65530 + 19);
    expect(rb.fractionLost).to.equal(Math.floor((2 * 256) / 20));
  });
});
