/**
 * Reception statistics for one source (RFC 3550 A.1 sequence tracking, A.3 loss, A.8 jitter),
 * enough to fill an RTCP report block.
 */
import type { ReportBlock } from './rtcp';

export class ReceiveStats {
  ssrc = 0;
  private baseSeq = 0;
  private maxSeq = 0;
  private cycles = 0;
  received = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  private jitter = 0; // in timestamp units, scaled as in A.8 (float here)
  private lastTransit: number | null = null;
  private started = false;
  lastSrNtpMiddle = 0;
  lastSrArrivalMs = 0;
  /** the stream's RTP clock in ticks per ms (8; 48 for Opus) */
  ticksPerMs = 8;

  reset(ssrc: number, seq: number): void {
    this.ssrc = ssrc;
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.cycles = 0;
    this.received = 0;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
    this.jitter = 0;
    this.lastTransit = null;
    this.started = true;
  }

  /** arrivalTs: arrival time in timestamp units (the stream's clock) */
  onPacket(ssrc: number, seq: number, ts: number, arrivalTs: number): void {
    if (!this.started || ssrc !== this.ssrc) this.reset(ssrc, seq);
    const delta = (seq - this.maxSeq) & 0xffff;
    if (delta < 0x8000) {
      if (seq < this.maxSeq) this.cycles += 0x10000;
      this.maxSeq = seq;
    }
    this.received++;
    const transit = (arrivalTs - ts) | 0;
    if (this.lastTransit !== null) {
      const d = Math.abs((transit - this.lastTransit) | 0);
      this.jitter += (d - this.jitter) / 16;
    }
    this.lastTransit = transit;
  }

  get extendedMax(): number {
    return this.cycles + this.maxSeq;
  }

  get expected(): number {
    return this.started ? this.extendedMax - this.baseSeq + 1 : 0;
  }

  get lost(): number {
    return this.expected - this.received;
  }

  get jitterMs(): number {
    return this.jitter / this.ticksPerMs;
  }

  reportBlock(nowMs: number): ReportBlock | null {
    if (!this.started) return null;
    const expected = this.expected;
    const expectedInterval = expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fraction = expectedInterval <= 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval << 8) / expectedInterval);
    return {
      ssrc: this.ssrc >>> 0,
      fractionLost: Math.min(255, fraction),
      cumulativeLost: this.lost,
      highestSeq: this.extendedMax >>> 0,
      jitter: Math.round(this.jitter),
      lsr: this.lastSrNtpMiddle,
      dlsr: this.lastSrArrivalMs ? Math.round(((nowMs - this.lastSrArrivalMs) / 1000) * 65536) : 0,
    };
  }
}
