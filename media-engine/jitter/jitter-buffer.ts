/**
 * A small adaptive jitter buffer working on timestamps in samples of the PCM it holds (the RTP
 * timestamp, scaled by the caller where the codec's clock differs from its PCM rate), so any
 * packetisation (10, 20, 30 ms) comes out as frames of `frame` samples (160: 20 ms at 8 kHz). The playout point trails the newest packet by `target` frames;
 * the target grows when packets arrive too late and shrinks after 10 s in which its last frame was never needed;
 * a packet late when it is at its widest with nothing left to play restarts it from that packet.
 * Missing samples are concealed by repeating the last frame, fading, then silence.
 * Entries come from a per-buffer pool and samples are copied in, so a packet costs no allocation
 * once the pool holds the buffer's usual depth.
 */
import { tsDiff } from '../rtp-packet/packet';
import { LEG_JB_CAP, LEG_STATE_SAMPLES, LS } from '../native/leg-layout';

const FRAME_8K = 160;
/** pops of 20 ms without a reason to keep the frame the buffer grew: 10 s (JB_CALM_POPS in native/rtp_legs_int.h) */
const CALM_TICKS = 500;
/** a frame whose mean |sample| is under this is quiet: a frame after it may be skipped (JB_QUIET in C) */
const QUIET = 128;

interface Entry {
  ts: number;
  /** samples[0..len) hold the audio (the array may be longer: pooled) */
  len: number;
  samples: Int16Array;
}

export interface JitterStats {
  late: number;
  /** frames due while this worker stalled (skip()): dropped, but the far end's network did nothing wrong */
  stalled: number;
  concealed: number;
  dropped: number;
  targetFrames: number;
}

export class JitterBuffer {
  /** a ring of `count` entries from `head`, sorted by ts (no shift/splice: they reallocate the array) */
  private readonly ring: Entry[];
  private head = 0;
  private count = 0;
  private readonly pool: Entry[] = [];
  /** RTP timestamps are kept as signed 32-bit integers (small integers for V8); tsDiff compares them */
  private playTs = 0;
  private started = false;
  private target: number;
  private calmTicks = 0;
  private concealRun = 0;
  private playedAny = false;
  private readonly last: Int16Array;
  readonly stats: JitterStats = { late: 0, stalled: 0, concealed: 0, dropped: 0, targetFrames: 0 };

  constructor(
    private readonly minFrames = 1,
    private readonly maxFrames = 8,
    initialFrames = 2,
    /** samples per 20 ms frame (160 at 8 kHz, 320 at 16 kHz) */
    readonly frame = FRAME_8K,
  ) {
    this.last = new Int16Array(frame);
    this.target = Math.max(minFrames, Math.min(maxFrames, initialFrames));
    this.ring = new Array<Entry>(this.capacity + 1);
    this.stats.targetFrames = this.target;
  }

  /** Entries the ring holds: four times the widest target and some (a reader that stalled). */
  private get capacity(): number {
    return this.maxFrames * 4 + 8;
  }

  private at(k: number): Entry {
    return this.ring[(this.head + k) % this.ring.length];
  }

  /** Returns the oldest entry to the pool. */
  private dropFirst(): void {
    this.pool.push(this.ring[this.head]);
    this.head = (this.head + 1) % this.ring.length;
    this.count--;
  }

  /** Forget everything (new SSRC, or a timestamp jump): what it held goes unplayed. */
  reset(): void {
    while (this.count) this.dropFirst();
    this.started = false;
    this.floor = null;
    this.skippedFrom = this.skippedTo = null;
    this.calmTicks = 0;
    this.concealRun = 0;
    this.playedAny = false;
  }

  /** The timestamps a stall skipped (skip()): [from, to), null when none did since the last start. */
  private skippedFrom: number | null = null;
  private skippedTo: number | null = null;

  /**
   * The worker could not run for `frames` pops (a stall its clock skipped rather than caught up): the
   * playout point moves on by as many, as the leg's RTP clock did. Left where the stall found it, it
   * played the stall's length late from then on (a far end with its own clock: its packets of the stall
   * wait here) or concealed that length (a far end in the same stalled worker: its timestamps jumped too).
   * What was due meanwhile is dropped, now or when it comes, without growing the buffer for it, and
   * counted `stalled`, not `late`: the worker's own stall is not loss on the far end's path (its MOS).
   */
  skip(frames: number): void {
    if (!this.started || frames <= 0) return;
    this.skippedFrom = this.playTs;
    this.playTs = (this.playTs + frames * this.frame) | 0;
    this.skippedTo = this.playTs;
    while (this.count && tsDiff(this.ring[this.head].ts + this.ring[this.head].len, this.playTs) <= 0) {
      // (the frame last played stays held until the next pop: not counted)
      if (tsDiff(this.ring[this.head].ts, this.skippedFrom) >= 0) this.stats.stalled++;
      this.dropFirst();
    }
  }

  /** True when a packet at `ts` was due in the time a stall skipped. */
  private wasSkipped(ts: number): boolean {
    return this.skippedFrom !== null && this.skippedTo !== null && tsDiff(ts, this.skippedFrom) >= 0 && tsDiff(ts, this.skippedTo) < 0;
  }

  /** Starts since it was made: a reset (new source, a jump) starts a new count, so a reader ahead of the playout point can tell. */
  starts = 0;

  /** The timestamp of the frame the last pop() that returned true gave. */
  poppedTs = 0;

  /** The timestamp of the frame the next pop() gives, or null before the first packet (or after a reset). */
  get playoutTs(): number | null {
    return this.started ? this.playTs : null;
  }

  /** The timestamp of the oldest audio held, or null when none is. */
  get oldestTs(): number | null {
    return this.count ? this.ring[this.head].ts : null;
  }

  /**
   * The frame at `ts` when it came whole and is not played yet: an entry of exactly one frame starting
   * there, no other overlapping it. Its first `frame` samples are what pop() gives for `ts`, so changes
   * made to them (an echo canceller working ahead of the playout point) are what is played. Else null.
   */
  frameAt(ts: number): Int16Array | null {
    if (!this.started || tsDiff(ts, this.playTs) < 0) return null;
    return this.wholeFrame(ts);
  }

  /**
   * The entry of the frame pop() just gave, when it was one whole entry (frameAt's terms), else null: an
   * early reader that cleaned the frame as played writes it back, so a frame played again (the buffer
   * grew) is the cleaned one.
   */
  poppedFrame(): Int16Array | null {
    return this.started ? this.wholeFrame(this.poppedTs) : null;
  }

  /**
   * Timestamps before it are refused as late (an early reader's: it handed those on already, so audio
   * for them that comes now would be played unheard by it); null: none. A reset clears it.
   */
  floor: number | null = null;

  /** The entry of exactly one frame at `ts` (its array one frame long), none overlapping it; else null. */
  private wholeFrame(ts: number): Int16Array | null {
    for (let i = 0; i < this.count; i++) {
      const e = this.at(i);
      const d = tsDiff(e.ts, ts);
      if (d < 0) {
        if (tsDiff(e.ts + e.len, ts) > 0) return null; // an earlier entry reaches into it
        continue;
      }
      if (d > 0 || e.len !== this.frame || e.samples.length !== this.frame) return null;
      const next = i + 1 < this.count ? this.at(i + 1) : null;
      return next && tsDiff(next.ts, ts + this.frame) < 0 ? null : e.samples;
    }
    return null;
  }

  get depthFrames(): number {
    if (!this.started || this.count === 0) return 0;
    const lastE = this.at(this.count - 1);
    return Math.max(0, tsDiff(lastE.ts + lastE.len, this.playTs) / this.frame);
  }

  /** Adds samples[0..length) played at RTP timestamp `ts` (copied: the caller may reuse `samples`). */
  push(ts: number, samples: Int16Array, length = samples.length): void {
    const dst = this.reserve(ts, length);
    if (dst === null) return;
    if (length === samples.length) dst.set(samples);
    else for (let k = 0; k < length; k++) dst[k] = samples[k];
  }

  /**
   * Takes a packet of `length` samples played at `ts` as `push` does, but hands back the array whose
   * first `length` samples are its place (to be filled before the next pop: a decoder writes there
   * directly, saving a copy; the array may be longer), or null when the packet is not kept (late, a duplicate).
   */
  reserve(ts: number, length: number): Int16Array | null {
    if (!this.started) {
      this.started = true;
      this.starts++;
      this.playTs = (ts - this.target * this.frame) | 0;
    } else {
      const d = tsDiff(ts, this.playTs);
      if (d + length <= 0) {
        if (this.wasSkipped(ts)) {
          // due while the worker stalled: dropped as the audio the leg did not send then
          this.stats.stalled++;
          return null;
        }
        // too late to play: widen the buffer so the next ones fit
        this.stats.late++;
        if (d > -this.frame * 50 && !this.behind()) this.grow();
        else {
          // a jump backwards (the sender restarted), or a sender fallen behind the clock by more than the
          // buffer at its widest holds, with nothing left to play: start again from this packet (its
          // packets would all be late, dropped until a second behind: a second of the talker unheard)
          this.reset();
          return this.reserve(ts, length);
        }
        return null;
      }
      if (d > this.frame * 50 * 5) {
        // a jump forward by more than 5 s: resynchronise rather than play seconds of concealment
        this.reset();
        return this.reserve(ts, length);
      }
      if (this.floor !== null && tsDiff(ts, this.floor) < 0) {
        this.stats.late++;
        return null;
      }
    }
    // insert sorted; ignore duplicates
    let i = this.count;
    while (i > 0 && tsDiff(this.at(i - 1).ts, ts) > 0) i--;
    if (i > 0 && this.at(i - 1).ts === ts) return null;
    const e = this.take(length);
    e.ts = ts;
    e.len = length;
    const n = this.ring.length;
    for (let j = this.count; j > i; j--) this.ring[(this.head + j) % n] = this.ring[(this.head + j - 1) % n];
    this.ring[(this.head + i) % n] = e;
    this.count++;
    if (this.count > this.capacity) {
      // more came unread than it holds (its reader stalled): the oldest go, down to its depth, and the
      // playout point moves up to the oldest left. Left behind them, it found nothing at any later read
      // while each new packet pushed the oldest out: the talker unheard for ever.
      while (this.count > this.target) {
        this.dropFirst();
        this.stats.dropped++;
      }
      if (tsDiff(this.at(0).ts, this.playTs) > 0) this.playTs = this.at(0).ts;
    }
    return e.samples;
  }

  /** An entry from the pool with room for `length` samples. */
  private take(length: number): Entry {
    const e = this.pool.pop() ?? { ts: 0, len: 0, samples: new Int16Array(Math.max(this.frame, length)) };
    if (e.samples.length < length) e.samples = new Int16Array(length);
    return e;
  }

  /** At its widest and holding nothing at or after the playout point: a late packet is a sender behind the clock, not jitter. */
  private behind(): boolean {
    if (this.target < this.maxFrames) return false;
    if (!this.count) return true;
    const lastE = this.at(this.count - 1);
    return tsDiff(lastE.ts + lastE.len, this.playTs) <= 0;
  }

  private grow(): void {
    if (this.target < this.maxFrames) {
      this.target++;
      this.stats.targetFrames = this.target;
      this.playTs = (this.playTs - this.frame) | 0;
    }
    this.calmTicks = 0;
  }

  /**
   * Fills `out` with the next 160 samples; returns false when nothing has ever been received (or after
   * a long silence), in which case `out` holds silence.
   */
  pop(out: Int16Array): boolean {
    if (!this.started) {
      out.fill(0);
      return false;
    }
    let filled = 0;
    let i = 0;
    const start = (this.poppedTs = this.playTs);
    const frame = this.frame;
    // drop entries fully before the playout point
    while (this.count && tsDiff(this.ring[this.head].ts + this.ring[this.head].len, start) <= 0) this.dropFirst();
    // the usual case, a whole frame in the first entry, overwrites all of `out`: no clearing first
    const first = this.count ? this.ring[this.head] : null;
    if (first === null || first.ts !== start || first.len < frame) out.fill(0);
    for (i = 0; i < this.count; i++) {
      const e = this.at(i);
      const off = tsDiff(e.ts, start);
      if (off >= frame) break;
      if (off === 0 && e.len === frame && e.samples.length === frame) {
        out.set(e.samples); // a whole frame, aligned: one copy (memcpy)
        filled += frame;
        continue;
      }
      const from = Math.max(0, -off);
      const to = Math.min(e.len, frame - off);
      for (let k = from; k < to; k++) out[off + k] = e.samples[k];
      filled += to - from;
    }
    this.playTs = (this.playTs + this.frame) | 0;
    if (filled === 0) {
      if (!this.playedAny) return true; // still the initial playout delay
      this.stats.concealed++;
      this.concealRun++;
      if (this.count === 0 && this.concealRun > 50) {
        // the far end went quiet (hold, VAD): restart cleanly on its next packet
        this.reset();
        return false;
      }
      this.conceal(out);
    } else {
      this.concealRun = 0;
      this.playedAny = true;
      this.last.set(out);
    }
    // a frame given back after 10 s in which no packet was late and the buffer never fell under two
    // frames ahead of the playout point (a whole spare frame never touched; in steady flow the depth
    // is the target itself, so a frame grown for a burst of lateness comes back), at a pause: the
    // frame skipped follows a quiet one that was played (counted as dropped), so speech is not cut
    if (this.depthFrames < 2) this.calmTicks = 0;
    else if (++this.calmTicks > CALM_TICKS && this.target > this.minFrames && filled > 0 && quiet(out, frame)) {
      this.calmTicks = 0;
      this.target--;
      this.stats.targetFrames = this.target;
      this.stats.dropped++;
      this.playTs = (this.playTs + this.frame) | 0;
    }
    return true;
  }

  /** Its whole state into a C leg's state (native/leg-layout.ts): a plain G.711 leg moving to C. */
  saveTo(v: Float64Array, samples: Int16Array): void {
    v[LS.JB_STARTED] = +this.started;
    v[LS.JB_PLAY_TS] = this.playTs;
    v[LS.JB_TARGET] = this.target;
    v[LS.JB_CALM] = this.calmTicks;
    v[LS.JB_CONCEAL_RUN] = this.concealRun;
    v[LS.JB_PLAYED_ANY] = +this.playedAny;
    v[LS.JB_LATE] = this.stats.late;
    v[LS.JB_STALLED] = this.stats.stalled;
    v[LS.JB_CONCEALED] = this.stats.concealed;
    v[LS.JB_DROPPED] = this.stats.dropped;
    samples.set(this.last.subarray(0, FRAME_8K));
    let at = FRAME_8K;
    let n = 0;
    for (let i = 0; i < this.count && n < LEG_JB_CAP; i++) {
      const e = this.at(i);
      if (at + e.len > LEG_STATE_SAMPLES) break;
      v[LS.JB_ENTRIES + 2 * n] = e.ts;
      v[LS.JB_ENTRIES + 2 * n + 1] = e.len;
      samples.set(e.samples.subarray(0, e.len), at);
      at += e.len;
      n++;
    }
    v[LS.JB_COUNT] = n;
  }

  /** Takes the state a C leg hands back (saveTo's layout). */
  loadFrom(v: Float64Array, samples: Int16Array): void {
    while (this.count) this.dropFirst();
    this.started = v[LS.JB_STARTED] !== 0;
    this.starts++;
    this.playTs = v[LS.JB_PLAY_TS] | 0;
    this.target = this.stats.targetFrames = v[LS.JB_TARGET];
    this.calmTicks = v[LS.JB_CALM];
    this.concealRun = v[LS.JB_CONCEAL_RUN];
    this.playedAny = v[LS.JB_PLAYED_ANY] !== 0;
    this.stats.late = v[LS.JB_LATE];
    this.stats.stalled = v[LS.JB_STALLED];
    this.stats.concealed = v[LS.JB_CONCEALED];
    this.stats.dropped = v[LS.JB_DROPPED];
    this.last.set(samples.subarray(0, FRAME_8K));
    let at = FRAME_8K;
    for (let i = 0; i < v[LS.JB_COUNT]; i++) {
      const len = v[LS.JB_ENTRIES + 2 * i + 1];
      const e = this.take(len);
      e.ts = v[LS.JB_ENTRIES + 2 * i] | 0;
      e.len = len;
      e.samples.set(samples.subarray(at, at + len));
      at += len;
      this.ring[(this.head + this.count) % this.ring.length] = e;
      this.count++;
    }
  }

  private conceal(out: Int16Array): void {
    // repeat the last good frame with a fade for 3 frames, then silence
    if (this.concealRun > 3) return;
    const g = 1 - this.concealRun / 4;
    for (let k = 0; k < this.frame; k++) out[k] = this.last[k] * g;
  }
}

/** The frame's mean |sample| is under QUIET. */
function quiet(x: Int16Array, n: number): boolean {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i] < 0 ? -x[i] : x[i];
  return sum < QUIET * n;
}
