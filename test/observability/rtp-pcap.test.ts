/**
 * RTP in the call's pcap (issue 38, docs/observability.md "RTP in the pcap"): with RTP_CAPTURE=full on
 * the media node, a sipp call whose media is a real engine endpoint (RTP + RTCP both ways through a
 * loopback relay) gives a pcap from GET /timelines/calls/{id}/pcap holding its SIP ladder and the RTP
 * of both directions with the legs' real addresses, ports and sequence numbers, and RTCP; lengths as
 * on the wire. Off (the default) it holds the SIP only (test/observability/quality.test.ts).
 */
import { expect } from 'chai';
import type { Endpoint, MediaServer } from '../../media-engine';
import { LossyRelay } from '../../testkit/lossy-relay';
import { readPcap, type PcapPacket } from '../../testkit/pcap-reader';
import { killAllSipp, until } from '../../testkit/media-app/harness';
import { startStack, type Stack } from '../xfer/support';
import { answeringNumber, dialThrough, phoneBehind, startPhones } from './relay-calls';
import { bufferBody } from '../../testkit/buffer-body';

const isRtp = (p: PcapPacket) => p.proto === 17 && p.payload.length >= 12 && p.payload[0]! >> 6 === 2 && (p.payload[1]! & 0x7f) === 0;
const isRtcp = (p: PcapPacket) => p.proto === 17 && p.payload.length >= 8 && p.payload[0]! >> 6 === 2 && p.payload[1]! >= 200 && p.payload[1]! <= 207;

describe('RTP in the pcap: RTP_CAPTURE=full', function () {
  this.timeout(120_000);
  let s: Stack;
  let phones: MediaServer;
  let number = '';
  let cid = '';

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_CAPTURE: 'on', RTP_CAPTURE: 'full', RTP_CAPTURE_MAX_PACKETS: '5000' });
    cid = s.f.customer.id;
    number = await answeringNumber(s, { trunk: 'rc', prefix: '+8991381', sleepMs: 8000 });
    phones = await startPhones();
  });
  after(async () => {
    killAllSipp();
    await phones?.destroy();
    await s?.close();
  });

  it('holds the SIP ladder and the RTP of both directions with the right ports and sequence numbers, and RTCP', async () => {
    const relay = await LossyRelay.open({ seed: 38 });
    let phone: Endpoint | undefined;
    let id = '';
    try {
      phone = await phoneBehind(phones, relay);
      await dialThrough(s, number, relay);
      id = (await until(async () => ((await s.t.ctx.db('calls').where({ customer_id: cid, status: 'hangup' }).first()) as { id: string } | undefined) ?? null, 15_000, 'the call hung up')).id;
    } finally {
      await relay.close();
      await phone?.destroy();
    }
    const res = await s.api.get(`/timelines/calls/${id}/pcap`).buffer(true).parse(bufferBody);
    expect(res.status).to.equal(200);
    const { linkType, packets } = readPcap(res.body as Buffer);
    expect(linkType).to.equal(101);
    // the SIP ladder, and the platform's media port from its answer
    const sip = packets.filter((p) => p.srcPort === s.p.sipPort || p.dstPort === s.p.sipPort);
    const firstLines = sip.map((p) => p.payload.toString('utf8').split('\r\n')[0]!);
    expect(firstLines.some((l) => l.startsWith('INVITE '))).to.equal(true);
    expect(firstLines.some((l) => l.startsWith('BYE '))).to.equal(true);
    const answer = sip.map((p) => p.payload.toString('utf8')).find((t) => t.startsWith('SIP/2.0 200') && t.includes('m=audio'))!;
    const platformPort = Number(/m=audio (\d+)/.exec(answer)![1]);
    const farPort = relay.far.rtpPort;

    const rtpIn = packets.filter((p) => isRtp(p) && p.srcPort === farPort && p.dstPort === platformPort);
    const rtpOut = packets.filter((p) => isRtp(p) && p.srcPort === platformPort && p.dstPort === farPort);
    // 8 s of 20 ms packets each way (the first ones of the call: the bound is 5,000)
    expect(rtpIn.length, 'RTP towards the platform').to.be.greaterThan(250);
    expect(rtpOut.length, 'RTP from the platform').to.be.greaterThan(250);
    for (const dir of [rtpIn, rtpOut]) {
      expect(dir.every((p) => p.src === '127.0.0.1' && p.dst === '127.0.0.1')).to.equal(true);
      // full mode: whole packets, lengths as on the wire (IPv4 + UDP + 12-byte RTP header + 160 bytes PCMU)
      expect(dir.every((p) => p.inclLen === p.origLen && p.ipTotalLen === p.origLen && p.udpLen === p.payload.length + 8 && p.payload.length === 172)).to.equal(true);
      // one stream (one SSRC) whose sequence numbers advance by one, as sent on loopback
      const ssrcs = new Set(dir.map((p) => p.payload.readUInt32BE(8)));
      expect(ssrcs.size).to.equal(1);
      const seqs = dir.map((p) => p.payload.readUInt16BE(2));
      const steps = seqs.slice(1).map((q, i) => (q - seqs[i]! + 0x10000) & 0xffff);
      expect(steps.filter((x) => x !== 1).length, 'sequence gaps').to.be.at.most(2);
    }
    // the two streams are the two directions' (the platform's SSRC is not the phone's)
    expect(rtpIn[0]!.payload.readUInt32BE(8)).to.not.equal(rtpOut[0]!.payload.readUInt32BE(8));
    // RTCP on RTP port + 1, both ways (SR/RR every 5 s ± 50 %: at least one each way in 8 s is likely but not certain)
    const rtcp = packets.filter((p) => isRtcp(p) && (p.srcPort === platformPort + 1 || p.dstPort === platformPort + 1));
    expect(rtcp.length, 'RTCP of the leg').to.be.greaterThan(0);
    // in time order, SIP and media merged
    for (let i = 1; i < packets.length; i++) expect(packets[i]!.us).to.be.at.least(packets[i - 1]!.us);
    const inviteAt = sip.find((p) => p.payload.toString('utf8').startsWith('INVITE '))!.us;
    expect(rtpIn[0]!.us).to.be.greaterThan(inviteAt);
  });
});
