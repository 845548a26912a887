import { expect } from 'chai';
import { LegQuality, type LegStatsInput, type SwitchLegInput } from '../../core/quality/leg';
import { emodel } from '../../core/quality/emodel';

/** Cumulative engine stats after `expected` packets with `lost` lost, jitter `jitterMs`. */
function stats(expected: number, lost: number, jitterMs: number, o: Partial<LegStatsInput> = {}): LegStatsInput {
  return { packetsExpected: expected, lost, late: 0, dropped: 0, jitterMs, jitterBufferMs: 40, codec: 'PCMU', ptimeMs: 20, rtcp: { rttMs: null, lastReportOnUs: null, voipMetrics: null }, ...o };
}

/** Cumulative switch figures (the fsmrf backend's rtp_audio_* variables): `received`, `lost`, the leg's worst spread of arrivals (√ its jitter max variance). */
const onSwitch = (received: number, lost: number, jitterMs = 0): SwitchLegInput => ({ packetsReceived: received, lost, interarrivalJitterMs: jitterMs, codec: 'PCMU', ptimeMs: 20 });

/** The E-model's MOS and R of a switch leg's period: its loss, the 20 ms packet (the leg's jitter is no figure of a period). */
const switchScore = (lossPct: number) => {
  const e = emodel({ codec: 'PCMU', lossPct, oneWayDelayMs: 20 });
  return { mos: Math.round(e.mos * 100) / 100, r_factor: Math.round(e.r * 10) / 10, raw: e.mos };
};
/** A sample's mos and r_factor of a switch leg */
const score = (lossPct: number) => {
  const { mos, r_factor } = switchScore(lossPct);
  return { mos, r_factor };
};

describe('core/quality: a leg over time (samples, alarms, summary)', () => {
  it('each sample scores its own period; the summary keeps the lowest and mean MOS and the total loss', () => {
    const q = new LegQuality();
    const a = q.sample(stats(250, 0, 2));
    expect(a.in!.loss_pct).to.equal(0);
    expect(a.in!.mos).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: 0, oneWayDelayMs: 60 }).mos, 0.005);
    const b = q.sample(stats(500, 25, 2)); // 25 of the next 250: 10 %
    expect(b.in!.loss_pct).to.equal(10);
    expect(b.in!.mos).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: 10, oneWayDelayMs: 60 }).mos, 0.005);
    expect(b.out, 'no RTCP report from the party').to.equal(null);
    const sum = q.summary();
    expect(sum.in!.loss_pct).to.equal(5);
    expect(sum.in!.mos_min).to.equal(b.in!.mos);
    expect(sum.in!.mos_avg).to.be.closeTo((a.in!.mos + b.in!.mos) / 2, 0.01);
    expect(sum.out).to.equal(null);
  });

  it('no packets in a period: no sample; late and dropped packets lower the MOS but not the reported loss', () => {
    const q = new LegQuality();
    q.sample(stats(250, 0, 2));
    expect(q.sample(stats(250, 0, 2)).in).to.equal(null);
    const s = q.sample(stats(500, 0, 2, { late: 10, dropped: 2 }));
    expect(s.in!.loss_pct).to.equal(0);
    expect(s.in!.mos).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: 4.8, oneWayDelayMs: 60 }).mos, 0.005);
  });

  it('alarms: raised once when a metric crosses, cleared once when it is back, per direction and metric', () => {
    const q = new LegQuality({ mosBelow: 3.5, lossPctAbove: 3, jitterMsAbove: 30, rttMsAbove: 300 });
    expect(q.sample(stats(250, 0, 45)).alarms).to.deep.equal([{ direction: 'in', metric: 'jitter_ms', state: 'raised', value: 45, threshold: 30 }]);
    expect(q.sample(stats(500, 0, 50)).alarms, 'still over: nothing new').to.deep.equal([]);
    const both = q.sample(stats(750, 50, 10, { rtcp: { rttMs: 400, lastReportOnUs: null, voipMetrics: null } })).alarms;
    expect(both.map((a) => `${a.metric}:${a.state}`)).to.deep.equal(['mos:raised', 'loss_pct:raised', 'jitter_ms:cleared', 'rtt_ms:raised']);
    expect(q.sample(stats(1000, 50, 10)).alarms.map((a) => `${a.metric}:${a.state}`)).to.deep.equal(['mos:cleared', 'loss_pct:cleared']);
  });

  it('out: from the party reports on our stream (one sample per new report), XR loss and buffer when sent', () => {
    const q = new LegQuality();
    const rr = { fractionLost: 13, jitter: 160, highestSeq: 1000 }; // 5.1 %, 20 ms at 8 kHz
    const s1 = q.sample(stats(250, 0, 2, { rtcp: { rttMs: 80, lastReportOnUs: rr, voipMetrics: null } }));
    expect(s1.out).to.deep.include({ loss_pct: 5.08, jitter_ms: 20, rtt_ms: 80 });
    expect(s1.out!.mos).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: (100 * 13) / 256, oneWayDelayMs: 40 + 40 + 20 }).mos, 0.005);
    expect(q.sample(stats(500, 0, 2, { rtcp: { rttMs: 80, lastReportOnUs: rr, voipMetrics: null } })).out, 'the same report again').to.equal(null);
    const xr = { lossRate: 13, discardRate: 13, jbNominalMs: 100 };
    const s3 = q.sample(stats(750, 0, 2, { rtcp: { rttMs: 80, lastReportOnUs: { ...rr, highestSeq: 1250 }, voipMetrics: xr } }));
    expect(s3.out!.loss_pct, 'network loss as reported').to.equal(5.08);
    expect(s3.out!.mos).to.be.closeTo(emodel({ codec: 'PCMU', lossPct: (100 * 26) / 256, oneWayDelayMs: 40 + 100 + 20 }).mos, 0.005);
  });

  it('a restarted source (new endpoint, SSRC) is measured from zero', () => {
    const q = new LegQuality();
    q.sample(stats(1000, 0, 2));
    q.restart();
    expect(q.sample(stats(100, 10, 2)).in!.loss_pct).to.equal(10);
  });

  it('a leg on a switch: its loss per period from the counts, scored by the E-model; no jitter per period, no RTT or out', () => {
    const q = new LegQuality();
    const a = q.sampleSwitch(onSwitch(250, 0, 1));
    expect(a).to.deep.equal({ codec: 'PCMU', in: { ...score(0), loss_pct: 0, jitter_ms: null, rtt_ms: null }, out: null, alarms: [] });
    // 25 of the next 250 sequence numbers missing (225 received): 10 %
    const b = q.sampleSwitch(onSwitch(475, 25, 1));
    expect(b.in).to.deep.equal({ ...score(10), loss_pct: 10, jitter_ms: null, rtt_ms: null });
    // the E-model's MOS of 10 % random loss is under 3.5 as well
    expect(b.alarms.map((x) => `${x.metric}:${x.state}`)).to.deep.equal(['mos:raised', 'loss_pct:raised']);
    expect(q.sampleSwitch(onSwitch(475, 25, 1)).in, 'nothing new in the period').to.equal(null);
    const [ma, mb] = [switchScore(0), switchScore(10)];
    // the summary's jitter: the switch's worst of the leg at the last read
    expect(q.summary()).to.deep.equal({ codec: 'PCMU', in: { mos_min: mb.mos, mos_avg: Math.round(((ma.raw + mb.raw) / 2) * 100) / 100, loss_pct: 5, jitter_ms: 1, rtt_ms: null }, out: null });
  });

  it("a switch leg's jitter (the leg's worst) scores no period and raises no alarm; the summary reports it", () => {
    const q = new LegQuality();
    const clean = q.sampleSwitch(onSwitch(250, 0, 0.5)).in!;
    const jittery = q.sampleSwitch(onSwitch(500, 0, 80));
    expect(jittery.in).to.deep.equal({ ...score(0), loss_pct: 0, jitter_ms: null, rtt_ms: null });
    expect(jittery.in!.mos).to.equal(clean.mos);
    expect(jittery.alarms).to.deep.equal([]);
    expect(q.summary().in!.jitter_ms).to.equal(80);
  });

  it('a switch MOS under the threshold raises the MOS alarm; RTT, never reported, raises none', () => {
    const q = new LegQuality({ mosBelow: 3.5, lossPctAbove: 50, jitterMsAbove: 100, rttMsAbove: 0 });
    // 40 of 100 missing: the E-model's MOS for 40 % loss
    expect(q.sampleSwitch(onSwitch(60, 40)).alarms).to.deep.equal([{ direction: 'in', metric: 'mos', state: 'raised', value: switchScore(40).mos, threshold: 3.5 }]);
  });
});
