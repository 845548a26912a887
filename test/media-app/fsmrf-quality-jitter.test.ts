// A switch leg's jitter in call quality (core/quality/leg.ts sampleSwitch, fed by
// media-app/media-server/fsmrf/leg-stats.ts). The switch reports no jitter figure per period: FreeSWITCH's
// rtp_audio_in_jitter_max_variance is the highest value of a running variance over the whole leg
// (switch_rtp.c check_jitter: jitter_addsq / jitter_n since the leg's start; set_stats writes only its lowest
// and highest), and our switch keeps the same highest across reads (esl/media-stats.ts jitterVariances).
// Fed into each period's score, one early spike lowered every later period's MOS and kept its alarms
// raised. Here each read goes the way a real one does: the switch's variables (the stand-in's own
// jitterVariances and FreeSWITCH's R) as uuid_dump's JSON, read by switchRtpCounts, scored by sampleSwitch.
import { expect } from 'chai';
import { LegQuality } from '../../core/quality/leg';
import { emodel, oneWayDelayMs } from '../../core/quality/emodel';
import { switchRtpCounts } from '../../media-app/media-server/fsmrf/leg-stats';
import { freeswitchQuality, jitterVariances } from '../../esl/media-stats';

/** A switch leg read after each period: cumulative counts, the jitter variances kept across reads as the switch keeps them. */
function switchLeg() {
  const vars = new Map<string, string>();
  let received = 0;
  let lost = 0;
  return {
    /** `packets` more received in the period (`missing` of them lost), the RFC 3550 jitter at the read `jitterMs`: uuid_dump's JSON */
    period(packets: number, missing: number, jitterMs: number): string {
      received += packets - missing;
      lost += missing;
      const v = jitterVariances(jitterMs, vars);
      const q = freeswitchQuality(received, lost);
      const set: [string, string][] = [
        ['in_packet_count', String(received)],
        ['in_flaw_total', String(lost)],
        ['in_quality_percentage', q.r.toFixed(2)],
        ['in_mos', q.mos.toFixed(2)],
        ['in_jitter_min_variance', v.min.toFixed(2)],
        ['in_jitter_max_variance', v.max.toFixed(2)],
        ['out_packet_count', String(received)],
        ['out_media_bytes', String(received * 160)],
      ];
      for (const [k, x] of set) vars.set(`rtp_audio_${k}`, x);
      const dump: Record<string, string> = { variable_rtp_use_codec_name: 'PCMU', variable_rtp_use_codec_ptime: '20' };
      for (const [k, x] of vars) dump[`variable_${k}`] = x;
      return JSON.stringify(dump);
    },
  };
}

/** The E-model's MOS of a period of a PCMU switch leg with `lossPct` loss: the packet time, no jitter figure. */
const periodMos = (lossPct: number) => Math.round(emodel({ codec: 'PCMU', lossPct, oneWayDelayMs: oneWayDelayMs({ rttMs: null, jitterBufferMs: 0, ptimeMs: 20, codec: 'PCMU' }) }).mos * 100) / 100;

describe('fsmrf call quality: the switch jitter per period', () => {
  it('one early spike (80 ms), then steady (2 ms): no later period is penalised, no alarm; the summary keeps the worst', () => {
    const spiked = new LegQuality();
    const steady = new LegQuality();
    const [a, b] = [switchLeg(), switchLeg()];
    const first = spiked.sampleSwitch(switchRtpCounts(a.period(250, 0, 80)));
    steady.sampleSwitch(switchRtpCounts(b.period(250, 0, 2)));
    expect(first.in!.jitter_ms, 'no jitter figure of the period: the switch gives none').to.equal(null);
    const alarms = [...first.alarms];
    for (let i = 0; i < 4; i++) {
      const s = spiked.sampleSwitch(switchRtpCounts(a.period(250, 0, 2)));
      const t = steady.sampleSwitch(switchRtpCounts(b.period(250, 0, 2)));
      expect(s.in, `period ${i + 2}`).to.deep.equal(t.in);
      expect(s.in!.mos, `period ${i + 2}: the MOS of its loss (none)`).to.equal(periodMos(0));
      alarms.push(...s.alarms);
    }
    expect(alarms, 'no alarm raised by the spike, none re-raised after').to.deep.equal([]);
    const sum = spiked.summary().in!;
    expect(sum.jitter_ms, "the call's worst spread of arrivals (√ the switch's max variance)").to.equal(80);
    expect([sum.mos_min, sum.mos_avg]).to.deep.equal([periodMos(0), periodMos(0)]);
    expect(steady.summary().in!.jitter_ms).to.equal(2);
  });

  it("a period's loss still scores that period only: 10 % in the second period, clean before and after", () => {
    const q = new LegQuality();
    const leg = switchLeg();
    const mos = [leg.period(250, 0, 2), leg.period(250, 25, 2), leg.period(250, 0, 2)].map((d) => q.sampleSwitch(switchRtpCounts(d)).in!.mos);
    expect(mos).to.deep.equal([periodMos(0), periodMos(10), periodMos(0)]);
  });
});
