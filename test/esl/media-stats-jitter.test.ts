// The switch's rtp_audio_in_jitter_min_variance / _max_variance (esl/media-stats.ts jitterVariances):
// FreeSWITCH's (switch_rtp.c check_jitter) are the lowest (first nonzero) and highest running variance,
// ms², of the packets' arrival intervals; ours stand on the engine's RFC 3550 interarrival jitter,
// squared at each uuid_set_media_stats, the lowest and highest kept across the channel's reads.
import { expect } from 'chai';
import { jitterVariances, mediaStatsVariables } from '../../esl/media-stats';
import type { EndpointStats } from '../../media-engine';

describe('esl switch: rtp_audio_in_jitter_min_variance and _max_variance', () => {
  it("the jitter squared, the lowest (nonzero) and highest across the channel's reads, two decimals", () => {
    const vars = new Map<string, string>();
    const read = (jitterMs: number) => {
      const s = { packetsReceived: 50, lost: 0, packetsSent: 50, octetsSent: 8000, jitterMs } as EndpointStats;
      for (const [k, v] of mediaStatsVariables(s, vars)) vars.set(`rtp_audio_${k}`, v);
      return [vars.get('rtp_audio_in_jitter_min_variance'), vars.get('rtp_audio_in_jitter_max_variance')];
    };
    // no jitter measured yet: both 0, and 0 is not a lowest (FreeSWITCH replaces a min_variance of 0)
    expect(read(0)).to.deep.equal(['0.00', '0.00']);
    expect(read(2.5)).to.deep.equal(['6.25', '6.25']);
    expect(read(40)).to.deep.equal(['6.25', '1600.00']);
    expect(read(1.5)).to.deep.equal(['2.25', '1600.00']);
    expect(read(0)).to.deep.equal(['2.25', '1600.00']);
  });

  it('a jitter that is not a number reads as none', () => {
    expect(jitterVariances(NaN, new Map())).to.deep.equal({ min: 0, max: 0 });
    expect(jitterVariances(-3, new Map([['rtp_audio_in_jitter_max_variance', '9.00']]))).to.deep.equal({ min: 0, max: 9 });
  });
});
