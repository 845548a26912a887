// getStats on the fsmrf backend (FsmrfCallEndpoint.getStats: the switch's uuid_set_media_stats then
// uuid_dump json, its rtp_audio_* variables): a far end of real RTP on
// loopback sends a known number of packets with a gap of 3 sequence numbers; the leg's counts are what it
// sent and lost, its R and MOS FreeSWITCH's of those, and what the switch sent is what the far end got
// (within the packets still on the way).
// The jitter buffer and RTCP figures have no source on the switch: absent, never made up.
import { expect } from 'chai';
import type { FsmrfCallEndpoint } from '../../../media-app/media-server/fsmrf/backend';
import { loopbackSdp } from '../../../testkit/sdp';
import { until } from '../../../testkit/media-app/harness';
import { useFsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
import { RtpParty } from './rtp-party';

describe('fsmrf backend: getStats from the switch', function () {
  this.timeout(30_000);
  const suite = useFsmrfSuite();
  let party: RtpParty;
  let leg: FsmrfCallEndpoint;

  beforeEach(async () => {
    party = new RtpParty();
    leg = await suite.backend.createEndpoint({ remoteSdp: loopbackSdp(await party.open()) });
  });
  afterEach(async () => {
    party.close();
    await leg.destroy().catch(() => undefined);
  });

  it("the switch's RTP counts: packets received and lost as sent, packets and bytes sent as the far end got them", async () => {
    const to = { address: '127.0.0.1', port: leg.local.port };
    await party.talk(to, 0, 30);
    party.skip(3);
    await party.talk(to, 0, 20);
    expect(party.sent).to.equal(50);
    // the last packets may still be on their way into the switch's engine: its count reaches 50, no more
    const stats = await until(async () => {
      const s = await leg.getStats();
      return s.packetsReceived >= 50 ? s : null;
    }, 3000);
    expect(stats.source).to.equal('switch');
    expect(stats.packetsReceived).to.equal(50);
    expect(stats.lost, 'the 3 sequence numbers left out').to.equal(3);
    // FreeSWITCH's own figures (do_mos): R = ⌊100·(50 − 3)/50⌋ = 94, MOS 1 + 0.035·94 + 7·10⁻⁶·94·34·6 = 4.42 (two decimals, as set_stats writes it)
    expect(stats.qualityPercentage).to.equal(94);
    expect(stats.mos).to.equal(4.42);
    expect(stats.codec).to.equal('PCMU');
    expect(stats.ptimeMs).to.equal(20);
    // what the switch has sent against what the far end got before and after the read (20 ms a packet on loopback)
    const before = party.received;
    const sent = await leg.getStats();
    const after = party.received;
    expect(sent.packetsSent).to.be.at.least(before);
    expect(sent.packetsSent).to.be.at.most(after + 3);
    expect(sent.octetsSent, 'PCMU: 160 bytes a 20 ms packet').to.equal(160 * sent.packetsSent);
    // no source on the switch: not in the result at all
    for (const k of ['jitterMs', 'jitterBufferMs', 'jitterTargetFrames', 'rtcp', 'packetsExpected', 'late', 'concealed']) expect(stats, k).not.to.have.property(k);
  });

  it('a destroyed leg: getStats rejects (no figures made up)', async () => {
    const uuid = leg.uuid;
    await leg.destroy();
    const err = await leg.getStats().then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message, uuid).to.match(/destroyed/);
  });
});
