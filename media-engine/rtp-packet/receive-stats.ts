/**
 * Reception statistics for one source (RFC 3550 A.1 sequence tracking, A.3 loss, A.8 jitter),
 * enough to fill an RTCP report block, plus what call quality needs: packets out of order and
 * duplicates. A duplicate (a sequence number seen within the last WINDOW) is counted apart and not as
 * received, so it cannot hide a loss. Nothing is allocated per packet.
 */
import type { ReportBlock } from './rtcp';
import { LS } from '../native/leg-layout';

/** how many recent sequence numbers are remembered for duplicate detection (a power of two) */
const WINDOW = 128;

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
  /** seen[seq % WINDOW] = 1 + (seq >> 7 & 0x7f): which sequence number last filled the slot */
  private readonly seen = new Uint8Array(WINDOW);
  /** packets that came after a later sequence number (RFC 3550: delta "behind" maxSeq), duplicates excluded */
  outOfOrder = 0;
  duplicates = 0;
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
    this.outOfOrder = 0;
    this.duplicates = 0;
    this.seen.fill(0);
  }

  /** Its state into a C leg's state (native/leg-layout.ts): a plain G.711 leg moving to C. */
  saveTo(v: Float64Array): void {
    v[LS.ST_STARTED] = +this.started;
    v[LS.ST_SSRC] = this.ssrc >>> 0;
    v[LS.ST_BASE] = this.baseSeq;
    v[LS.ST_MAX] = this.maxSeq;
    v[LS.ST_CYCLES] = this.cycles;
    v[LS.ST_RECEIVED] = this.received;
    v[LS.ST_EXP_PRIOR] = this.expectedPrior;
    v[LS.ST_REC_PRIOR] = this.receivedPrior;
    v[LS.ST_JITTER] = this.jitter;
    v[LS.ST_TRANSIT] = this.lastTransit ?? NaN;
    v[LS.ST_OOO] = this.outOfOrder;
    v[LS.ST_DUP] = this.duplicates;
    for (let i = 0; i < WINDOW; i++) v[LS.SEEN + i] = this.seen[i];
  }

  /** Takes the state a C leg hands back (saveTo's layout). */
  loadFrom(v: Float64Array): void {
    this.started = v[LS.ST_STARTED] !== 0;
    this.ssrc = v[LS.ST_SSRC] | 0;
    this.baseSeq = v[LS.ST_BASE];
    this.maxSeq = v[LS.ST_MAX];
    this.cycles = v[LS.ST_CYCLES];
    this.received = v[LS.ST_RECEIVED];
    this.expectedPrior = v[LS.ST_EXP_PRIOR];
    this.receivedPrior = v[LS.ST_REC_PRIOR];
    this.jitter = v[LS.ST_JITTER];
    this.lastTransit = Number.isNaN(v[LS.ST_TRANSIT]) ? null : v[LS.ST_TRANSIT];
    this.outOfOrder = v[LS.ST_OOO];
    this.duplicates = v[LS.ST_DUP];
    for (let i = 0; i < WINDOW; i++) this.seen[i] = v[LS.SEEN + i];
  }

  /** the slot's tag for `seq`: never 0, so an empty slot matches nothing */
  private static tag(seq: number): number {
    return 1 + ((seq >> 7) & 0x7f);
  }

  /** arrivalTs: arrival time in timestamp units (the stream's clock) */
  onPacket(ssrc: number, seq: number, ts: number, arrivalTs: number): void {
    if (!this.started || ssrc !== this.ssrc) this.reset(ssrc, seq);
    const delta = (seq - this.maxSeq) & 0xffff;
    const slot = seq & (WINDOW - 1);
    const tag = ReceiveStats.tag(seq);
    if (delta === 0 && this.received > 0) {
      this.duplicates++;
      return;
    }
    if (delta < 0x8000) {
      // forward: forget the slots of the numbers skipped over (they may come late), then take this one
      for (let k = 1, n = Math.min(delta, WINDOW); k < n; k++) this.seen[(seq - k) & (WINDOW - 1)] = 0;
      if (seq < this.maxSeq) this.cycles += 0x10000;
      this.maxSeq = seq;
    } else if (0x10000 - delta < WINDOW) {
      if (this.seen[slot] === tag) {
        this.duplicates++;
        return;
      }
      this.outOfOrder++;
    } else this.outOfOrder++;
    this.seen[slot] = tag;
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
