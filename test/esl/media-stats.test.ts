// The switch's uuid_set_media_stats figures (esl/media-stats.ts) as FreeSWITCH's set_stats and do_mos
// (switch_core_media.c, switch_rtp.c) define them, from the engine's counts: R ("quality percentage"),
// MOS from R, their two-decimal format, and do_mos' edge cases. The same over real RTP:
// test/media-app/media-server/fsmrf-stats.test.ts.
import { expect } from 'chai';
import { freeswitchQuality, mediaStatsVariables } from '../../esl/media-stats';
import type { EndpointStats } from '../../media-engine';

/** FreeSWITCH's MOS from its R (switch_rtp.c do_mos) */
const mosOf = (r: number) => 1 + 0.035 * r + 0.000007 * r * (r - 60) * (100 - r);

describe('esl switch: rtp_audio_in_quality_percentage and rtp_audio_in_mos (FreeSWITCH do_mos)', () => {
  it('R is the whole percentage of received packets not outweighed by flaws; MOS from it', () => {
    expect(freeswitchQuality(50, 3)).to.deep.equal({ r: 94, mos: mosOf(94) });
    expect(freeswitchQuality(135, 15).r, '88.9 %: the whole part').to.equal(88);
    expect(freeswitchQuality(100, 1).r).to.equal(99);
    expect(freeswitchQuality(10, 10)).to.deep.equal({ r: 0, mos: 1 });
    expect(mosOf(100)).to.equal(4.5);
  });

  it("do_mos' edges: no packet yet is R 100 (MOS 4.5); flaws above the packets received are dropped", () => {
    expect(freeswitchQuality(0, 0)).to.deep.equal({ r: 100, mos: 4.5 });
    expect(freeswitchQuality(0, 5).r).to.equal(100);
    expect(freeswitchQuality(10, 15).r).to.equal(100);
  });

  it("set_stats' variables: counters as integers, R and MOS with two decimals", () => {
    const s = { packetsReceived: 50, lost: 3, packetsSent: 40, octetsSent: 6400 } as EndpointStats;
    expect(Object.fromEntries(mediaStatsVariables(s))).to.deep.equal({
      in_packet_count: '50',
      in_flaw_total: '3',
      in_quality_percentage: '94.00',
      in_mos: '4.42',
      // no jitter measured (media-stats-jitter.test.ts): the variances start at 0, as FreeSWITCH's
      in_jitter_min_variance: '0.00',
      in_jitter_max_variance: '0.00',
      out_packet_count: '40',
      out_media_bytes: '6400',
      out_raw_bytes: String(6400 + 12 * 40),
    });
  });
});
