/**
 * One call leg's quality over time (pure, no I/O): fed the media server's cumulative statistics every
 * sample period, it gives that period's sample per direction, the alarms that crossed, and the
 * summary the call record keeps. Directions are the platform's: `in` is the audio we receive from the
 * party (measured by the engine), `out` the audio the party receives from us (from the party's RTCP).
 * A leg on a switch (the fsmrf backend: SwitchLegInput) has its `in` only, each period scored by the same
 * E-model from the switch's loss in it; the switch's jitter (a maximum over the whole leg) goes to the
 * summary only (sampleSwitch).
 */
import { emodel, oneWayDelayMs } from './emodel';

export type QualityDirection = 'in' | 'out';
export type QualityMetric = 'mos' | 'loss_pct' | 'jitter_ms' | 'rtt_ms';

/** What the engine reports of a leg (media-engine's EndpointStats, the fields used here). */
export interface LegStatsInput {
  packetsExpected: number;
  lost: number;
  late: number;
  dropped: number;
  jitterMs: number;
  jitterBufferMs: number;
  codec: string | null;
  ptimeMs: number;
  rtcp: {
    rttMs: number | null;
    lastReportOnUs: { fractionLost: number; jitter: number; highestSeq: number } | null;
    voipMetrics: { lossRate: number; discardRate: number; jbNominalMs: number } | null;
  };
}

/**
 * What a switch reports of a leg (the fsmrf backend: FreeSWITCH's rtp_audio_* variables, the fields
 * used here), cumulative over the leg: packets received, those it counts missing (its flaws), and the
 * spread of the packets' arrival intervals (√ its jitter max variance, ms). It has no jitter buffer
 * figure or RTCP.
 */
export interface SwitchLegInput {
  packetsReceived: number;
  lost: number;
  /**
   * √rtp_audio_in_jitter_max_variance: the highest value so far of a running variance over the whole leg
   * (switch_rtp.c check_jitter: jitter_addsq / jitter_n from the leg's start; set_stats exports only its
   * lowest and highest), never a figure of one period: the leg's worst, for the summary only
   */
  interarrivalJitterMs: number;
  codec: string | null;
  ptimeMs: number;
}

/** One direction of a sample: null figures are those the media server has no source for (a switch: jitter, RTT). */
export interface DirectionSample {
  mos: number;
  r_factor: number;
  loss_pct: number;
  jitter_ms: number | null;
  rtt_ms: number | null;
}

export interface DirectionSummary {
  mos_min: number;
  mos_avg: number;
  loss_pct: number;
  jitter_ms: number | null;
  rtt_ms: number | null;
}

/** The call record's `quality` (our extension of the call object). */
export interface CallQuality {
  codec: string;
  in: DirectionSummary | null;
  out: DirectionSummary | null;
}

export interface QualityThresholds {
  mosBelow: number;
  lossPctAbove: number;
  jitterMsAbove: number;
  rttMsAbove: number;
}

export const DEFAULT_THRESHOLDS: QualityThresholds = { mosBelow: 3.5, lossPctAbove: 3, jitterMsAbove: 30, rttMsAbove: 300 };

export interface QualityAlarm {
  direction: QualityDirection;
  metric: QualityMetric;
  /** raised: the value crossed the threshold; cleared: it is back within it */
  state: 'raised' | 'cleared';
  value: number;
  threshold: number;
}

export interface QualitySampleResult {
  codec: string;
  in: DirectionSample | null;
  out: DirectionSample | null;
  alarms: QualityAlarm[];
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

interface Acc {
  n: number;
  mosMin: number;
  mosSum: number;
  lossSum: number;
  jitterSum: number;
  jitterN: number;
  rttSum: number;
  rttN: number;
}

const newAcc = (): Acc => ({ n: 0, mosMin: Infinity, mosSum: 0, lossSum: 0, jitterSum: 0, jitterN: 0, rttSum: 0, rttN: 0 });

interface Counts {
  expected: number;
  lost: number;
  discarded: number;
}

export class LegQuality {
  private prev: Counts | null = null;
  /** inbound totals since the source started: a packet counted lost at one sample may arrive by the next */
  private inExpected = 0;
  private inLost = 0;
  private lastReportSeq: number | null = null;
  private readonly acc: Record<QualityDirection, Acc> = { in: newAcc(), out: newAcc() };
  private readonly raised = new Set<string>();
  private codec = 'PCMU';
  /** a switch leg's jitter, the worst of the leg at the last read (sampleSwitch): the summary's `in` jitter */
  private switchJitterMaxMs: number | null = null;

  constructor(private readonly thresholds: QualityThresholds = DEFAULT_THRESHOLDS) {}

  /** A new source (another endpoint): its counters start from zero. */
  restart(): void {
    this.prev = null;
    this.lastReportSeq = null;
  }

  /** The period since the last call: null per direction when nothing was measured in it (no audio, no new RTCP report). */
  sample(s: LegStatsInput): QualitySampleResult {
    if (s.codec) this.codec = s.codec;
    const rtt = s.rtcp.rttMs;
    const inbound = this.inbound(s, rtt);
    const outbound = this.outbound(s, rtt);
    const alarms = [...this.check('in', inbound), ...this.check('out', outbound)];
    return { codec: this.codec, in: inbound, out: outbound, alarms };
  }

  /** A period whose statistics could not be read (the endpoint gone, its read failed): nothing measured, no alarm changed. */
  unread(): QualitySampleResult {
    return { codec: this.codec, in: null, out: null, alarms: [] };
  }

  /**
   * A leg on a switch: the period's `in`, scored by the E-model as the engine's legs are, from the period's
   * loss (the switch's counts) and a one-way delay of the packet time and codec (the switch reports no
   * buffer of its own); no `out` (the switch gives no RTCP figures) and no RTT. The switch's jitter is the
   * leg's worst so far, not the period's (SwitchLegInput): fed into each period it let one early spike
   * lower every later period's MOS and keep its alarms raised, and no figure per period can be derived
   * from it. So a period has no jitter (null: no jitter alarm from a switch leg) and the summary's
   * `jitter_ms` is that worst, from the last read.
   */
  sampleSwitch(s: SwitchLegInput): QualitySampleResult {
    if (s.codec) this.codec = s.codec;
    this.switchJitterMaxMs = s.interarrivalJitterMs;
    const period = this.period({ expected: s.packetsReceived + s.lost, lost: s.lost, discarded: 0 });
    const delay = oneWayDelayMs({ rttMs: null, jitterBufferMs: 0, ptimeMs: s.ptimeMs, codec: this.codec });
    const inbound = period ? this.add('in', emodel({ codec: this.codec, lossPct: period.lossPct, oneWayDelayMs: delay }), period.lossPct, null, null) : null;
    return { codec: this.codec, in: inbound, out: null, alarms: this.check('in', inbound) };
  }

  /** The inbound counts since the last sample (null: nothing expected in it), added to the leg's totals. */
  private period(now: Counts): { expected: number; lost: number; discarded: number; lossPct: number } | null {
    const prev = this.prev;
    this.prev = now;
    // a new source (SSRC change) restarts the counts: measure from there
    const base = prev && now.expected >= prev.expected ? prev : { expected: 0, lost: 0, discarded: 0 };
    const expected = now.expected - base.expected;
    if (expected <= 0) return null;
    this.inExpected += expected;
    this.inLost += now.lost - base.lost;
    const lost = Math.max(0, now.lost - base.lost);
    const discarded = Math.max(0, now.discarded - base.discarded);
    return { expected, lost, discarded, lossPct: Math.min(100, (100 * lost) / expected) };
  }

  private inbound(s: LegStatsInput, rtt: number | null): DirectionSample | null {
    const p = this.period({ expected: s.packetsExpected, lost: s.lost, discarded: s.late + s.dropped });
    if (!p) return null;
    const heardLossPct = Math.min(100, (100 * (p.lost + p.discarded)) / p.expected);
    const delay = oneWayDelayMs({ rttMs: rtt, jitterBufferMs: s.jitterBufferMs, ptimeMs: s.ptimeMs, codec: this.codec });
    return this.add('in', emodel({ codec: this.codec, lossPct: heardLossPct, oneWayDelayMs: delay }), p.lossPct, s.jitterMs, rtt);
  }

  private outbound(s: LegStatsInput, rtt: number | null): DirectionSample | null {
    const rr = s.rtcp.lastReportOnUs;
    if (!rr || rr.highestSeq === this.lastReportSeq) return null;
    this.lastReportSeq = rr.highestSeq;
    const ticksPerMs = this.codec.toLowerCase() === 'opus' ? 48 : 8;
    const lossPct = (100 * rr.fractionLost) / 256;
    const xr = s.rtcp.voipMetrics;
    // with RTCP-XR the party tells what it heard (network loss and its discards) and its jitter buffer; without, our own buffer stands in
    const heardLossPct = xr ? (100 * Math.min(255, xr.lossRate + xr.discardRate)) / 256 : lossPct;
    const jb = xr ? xr.jbNominalMs : s.jitterBufferMs;
    const delay = oneWayDelayMs({ rttMs: rtt, jitterBufferMs: jb, ptimeMs: s.ptimeMs, codec: this.codec });
    return this.add('out', emodel({ codec: this.codec, lossPct: heardLossPct, oneWayDelayMs: delay }), lossPct, rr.jitter / ticksPerMs, rtt);
  }

  private add(d: QualityDirection, e: { r: number; mos: number }, lossPct: number, jitterMs: number | null, rtt: number | null): DirectionSample {
    const a = this.acc[d];
    a.n++;
    a.mosMin = Math.min(a.mosMin, e.mos);
    a.mosSum += e.mos;
    a.lossSum += lossPct;
    if (jitterMs !== null) {
      a.jitterSum += jitterMs;
      a.jitterN++;
    }
    if (rtt !== null) {
      a.rttSum += rtt;
      a.rttN++;
    }
    const opt = (x: number | null) => (x === null ? null : round(x, 1));
    return { mos: round(e.mos, 2), r_factor: round(e.r, 1), loss_pct: round(lossPct, 2), jitter_ms: opt(jitterMs), rtt_ms: opt(rtt) };
  }

  /** Alarms of one direction's sample: each metric raised once when it crosses, cleared once when back. */
  private check(d: QualityDirection, s: DirectionSample | null): QualityAlarm[] {
    if (!s) return [];
    const t = this.thresholds;
    const tests: [QualityMetric, number | null, number, boolean][] = [
      ['mos', s.mos, t.mosBelow, s.mos < t.mosBelow],
      ['loss_pct', s.loss_pct, t.lossPctAbove, s.loss_pct > t.lossPctAbove],
      ['jitter_ms', s.jitter_ms, t.jitterMsAbove, s.jitter_ms !== null && s.jitter_ms > t.jitterMsAbove],
      ['rtt_ms', s.rtt_ms, t.rttMsAbove, s.rtt_ms !== null && s.rtt_ms > t.rttMsAbove],
    ];
    const out: QualityAlarm[] = [];
    for (const [metric, value, threshold, bad] of tests) {
      if (value === null) continue;
      const key = `${d}:${metric}`;
      if (bad && !this.raised.has(key)) {
        this.raised.add(key);
        out.push({ direction: d, metric, state: 'raised', value, threshold });
      } else if (!bad && this.raised.has(key)) {
        this.raised.delete(key);
        out.push({ direction: d, metric, state: 'cleared', value, threshold });
      }
    }
    return out;
  }

  /**
   * The summary so far: the lowest MOS, averages over the samples; inbound loss from the totals (what
   * the media server counted lost of what it expected), outbound the mean of the party's reports. Null for
   * a direction never measured, and for jitter and RTT never reported. A switch leg's `in` jitter is the
   * switch's worst of the leg (sampleSwitch), not a mean of periods.
   */
  summary(): CallQuality {
    const of = (a: Acc, lossPct: number | null): DirectionSummary | null =>
      a.n === 0
        ? null
        : {
            mos_min: round(a.mosMin, 2),
            mos_avg: round(a.mosSum / a.n, 2),
            loss_pct: round(lossPct ?? a.lossSum / a.n, 2),
            jitter_ms: a.jitterN ? round(a.jitterSum / a.jitterN, 1) : null,
            rtt_ms: a.rttN ? round(a.rttSum / a.rttN, 1) : null,
          };
    const inLoss = this.inExpected > 0 ? Math.max(0, (100 * this.inLost) / this.inExpected) : null;
    const inbound = of(this.acc.in, inLoss);
    if (inbound && this.switchJitterMaxMs !== null) inbound.jitter_ms = round(this.switchJitterMaxMs, 1);
    return { codec: this.codec, in: inbound, out: of(this.acc.out, null) };
  }
}
