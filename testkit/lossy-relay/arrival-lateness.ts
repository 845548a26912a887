// How late a stream's RTP reached the lossy relay (index.ts), against its own timestamps: pure, the
// times are given (the relay's worker, worker.ts, gives performance.now() at each packet).
import { tsDiff } from '../../media-engine/rtp-packet/packet';

/**
 * How late a direction's RTP reached the relay: each packet's arrival against its RTP timestamp
 * (at `clockHz`), relative to the earliest packet of the stream; the worst is the most any packet came
 * behind the sender's clock and the relay's own loop (a stalled loop reads a burst at once). A stream is
 * one SSRC (a new one starts over, its worst kept) and its first packet's payload type: others (a
 * telephone-event holds one timestamp over its packets, comfort noise its own) are not its clock.
 */
export class ArrivalLateness {
  private n = 0;
  private ssrc = 0;
  private pt = 0;
  private lo = Infinity;
  private hi = -Infinity;
  private lastTs = 0;
  /** the timestamp since the stream's first packet, unwrapped past 2^32 */
  private ts = 0;
  /** the worst of the streams before this one */
  private before = 0;
  constructor(private readonly clockHz: number) {}

  /** A packet of `ssrc`, payload type `pt` and RTP timestamp `rtpTs` arrived at `atMs` (performance.now()). */
  add(ssrc: number, pt: number, rtpTs: number, atMs: number): void {
    if (this.n > 0 && ssrc !== this.ssrc) {
      this.before = this.worstMs;
      this.n = 0;
      this.lo = Infinity;
      this.hi = -Infinity;
    }
    if (this.n === 0) {
      this.ssrc = ssrc;
      this.pt = pt;
      this.ts = 0;
    } else if (pt !== this.pt) return;
    else this.ts += tsDiff(rtpTs, this.lastTs);
    this.n++;
    this.lastTs = rtpTs;
    const offset = atMs - (this.ts * 1000) / this.clockHz;
    this.lo = Math.min(this.lo, offset);
    this.hi = Math.max(this.hi, offset);
  }

  /** The worst lateness so far (ms): the largest offset over the smallest, of any stream; 0 before two packets of one. */
  get worstMs(): number {
    return Math.max(this.before, this.n < 2 ? 0 : this.hi - this.lo);
  }
}
