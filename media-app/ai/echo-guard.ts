/**
 * The echo guard of the voice loop (docs/ai.md "Turn-taking"): on a speakerphone the agent's own
 * voice comes back in the caller's audio, 50-300 ms late and attenuated, and would be heard as the
 * caller talking over the agent. The guard compares the caller's audio ("near") with what the call
 * sent ("far", an 'out' fork) by correlation: the 10 ms amplitude envelopes of both are correlated
 * over lags 0-600 ms; a lag that explains the near envelope well (Pearson over the blocks where the caller's side is loud, ≥ 0.8
 * over 1 s, ≥ 0.85 over a short run when nothing is known yet, at the same lag ±20 ms in two estimates in a row,
 * with echo in at least 70 % of the blocks where the agent is loud — for a first path over the last 3 s, so a caller
 * who starts over the agent after it talked to silence is not taken for its echo, at one gain in those blocks and
 * over at least 200 ms of the agent's voice — and attenuated: gain ≤ 1) gives the echo path (delay and gain, the gain being the
 * median near/far ratio, moving by at most 5 % per estimate so a caller over the echo does not inflate it). Each near 20 ms frame is then echo (passed on as silence, so neither the
 * VAD nor the recogniser hears it) when it is no louder than the predicted echo plus a margin of 8 dB,
 * and the caller (passed on whole) otherwise, with 240 ms of hangover so the caller's words are not
 * chopped; a run of loud frames taken for echo waits up to 160 ms in case it is the soft start of the
 * caller's word (the "s" of "stop", no louder than the echo's residue): passed with the word when the
 * caller is heard next, as silence otherwise. While the agent speaks and no path is known yet, loud near frames are held (at most
 * 400 ms) until the path is found (echo) or not (the caller: released in order). When the agent
 * has been silent for longer than the longest lag, everything passes at once.
 *
 * Frames are aligned by count, in step: both forks hold one frame per 20 ms, so a near frame is
 * compared from its own count plus the streams' steady offset (refOf: what the far count less the near
 * count was at most arrivals of the last second), not from how many far blocks had arrived with it. On
 * a loaded machine the forks' frames come bunched, a few early or late against each other, while what
 * they hold stays in step: aligned by arrival, an echo frame that came late was compared with the
 * agent's later audio, passed as the caller, and the agent was ducked by its own echo. A near frame
 * whose far blocks have not all come waits for them (at most WAIT_MAX frames; far20 returns it).
 */

const BLOCK_MS = 10;
const MAX_LAG = 60; // blocks: 600 ms
const WINDOW = 100; // blocks of the steady estimate: 1 s
const SHORT = 24; // blocks of the first estimate: 240 ms
const HOLD_MAX = 20; // frames held at most while undecided: 400 ms
const HANGOVER = 12; // frames the caller keeps the line after its last loud frame: 240 ms
const ONSET_MAX = 8; // loud frames taken for echo kept back in case they start the caller's word: 160 ms
const MARGIN = 2.5; // near amplitude over the predicted echo that is the caller (8 dB)
const NEAR_FLOOR = 150; // mean |sample| under which a frame is quiet (nothing to decide)
/** mean |sample| of a near block over which it counts as audible when the echo path is looked for (update) */
const NEAR_AUDIBLE = NEAR_FLOOR / 4;
const FAR_FLOOR = 150;
const HISTORY = 400; // blocks kept
const SEEN = 300; // blocks over which a first echo path must have been there whenever the agent was loud: 3 s
const MAX_GAIN = 1; // an echo path louder than what was sent (0 dB) is not one
const FIRST_BLOCKS = 20; // the agent's loud blocks a first path is judged over, at least (200 ms of its voice; it must explain 70 %)
const FIRST_SPREAD = 0.3; // most spread (interquartile, log10) of those blocks' near/far ratios: a factor of 2
/** near frames' arrivals the streams' steady offset is taken over: 1 s */
const OFFSETS = 50;
/** caller's frames that wait for the agent's at most: 100 ms */
const WAIT_MAX = 5;
const NONE: Int16Array[] = [];

export interface EchoPath {
  lagMs: number;
  gain: number;
  rho: number;
}

export interface EchoGuardStats {
  /** frames passed on as silence because they were the agent's echo */
  echoFrames: number;
  /** loud frames passed on as the caller's while the agent spoke */
  callerFrames: number;
}

export class EchoGuard {
  private readonly blockLen: number;
  private readonly far = new Float32Array(HISTORY);
  private farCount = 0;
  private readonly near = new Float32Array(HISTORY);
  /** for each near block: the far block count when it arrived */
  private readonly nearRef = new Int32Array(HISTORY);
  private nearCount = 0;
  private lastFarLoud = -1_000_000;
  private path: EchoPath | null = null;
  private lagBlocks = 0;
  /** the lag of the last estimate that correlated well: a path is adopted only when the next one agrees */
  private candidate: number | null = null;
  private held: Int16Array[] = [];
  /** loud frames taken for echo just now, kept in case the caller's word started there (holdOnset) */
  private readonly onset: Int16Array[] = [];
  private callerHang = 0;
  private readonly silence: Int16Array;
  /** followResidual's near/far ratios (no allocation per estimate) */
  private readonly ratios = new Float64Array(WINDOW);
  /** update's envelopes, reused (it runs every 100 ms of every call, and on each held frame) */
  private readonly scratch = { xs: new Float64Array(WINDOW), ys: new Float64Array(WINDOW), lx: new Float64Array(WINDOW), ly: new Float64Array(WINDOW), loud: new Int32Array(WINDOW) };
  /** the last far block over the floor update looks for a lag at (FAR_FLOOR / 4) */
  private lastFarAudible = -1_000_000;
  readonly stats: EchoGuardStats = { echoFrames: 0, callerFrames: 0 };
  /** far count less near count at each of the last OFFSETS near frames' arrival (refOf) */
  private readonly offsets = new Int32Array(OFFSETS);
  private readonly sortedOffsets = new Int32Array(OFFSETS);
  private arrivals = 0;
  /** the caller's frames whose far blocks had not all come (drain) */
  private readonly waiting: { frame: Int16Array; ref: number }[] = [];

  /** `rate`: both forks' sample rate (8000 or 16000). */
  constructor(rate: number) {
    this.blockLen = (rate * BLOCK_MS) / 1000;
    this.silence = new Int16Array((rate * 20) / 1000);
  }

  /** The echo path found (null: none yet). */
  get echoPath(): EchoPath | null {
    return this.path;
  }

  /** A frame of what the call sent (the agent's audio); returns the caller's frames that waited for it, to pass on now. */
  far20(frame: Int16Array): Int16Array[] {
    for (let i = 0; i + this.blockLen <= frame.length; i += this.blockLen) {
      const a = meanAbs(frame, i, this.blockLen);
      this.far[this.farCount % HISTORY] = a;
      if (a > FAR_FLOOR) this.lastFarLoud = this.farCount;
      if (a >= FAR_FLOOR / 4) this.lastFarAudible = this.farCount;
      this.farCount++;
    }
    return this.waiting.length ? this.drain() : NONE;
  }

  /**
   * The far block count a near frame arriving now is compared from: its own count plus the two streams'
   * steady offset: of (far count less near count) at each of the last second's arrivals, the lowest of
   * the densest band a frame wide (a tick's two frames come in either order). Both forks hold one frame
   * per 20 ms, so what a frame holds is in step with the agent's frames of its time however late it
   * came or however many of theirs came first; a frame whose far blocks have not all come waits.
   */
  private refOf(): number {
    const count = this.nearCount + this.waiting.length * (this.silence.length / this.blockLen);
    this.offsets[this.arrivals++ % OFFSETS] = this.farCount - count;
    const m = Math.min(this.arrivals, OFFSETS);
    const s = this.sortedOffsets;
    for (let i = 0; i < m; i++) {
      const v = this.offsets[i]!;
      let j = i;
      for (; j > 0 && s[j - 1]! > v; j--) s[j] = s[j - 1]!;
      s[j] = v;
    }
    // the densest frame-wide band of offsets (a tick's two frames in either order), from its lower end
    const width = this.silence.length / this.blockLen;
    let best = 0;
    let most = 0;
    for (let i = 0, j = 0; i < m; i++) {
      while (j < m && s[j]! <= s[i]! + width) j++;
      if (j - i > most) {
        most = j - i;
        best = s[i]!;
      }
    }
    return count + best;
  }

  /** A frame of the caller's audio; returns the frames to pass on now (echo as silence), in order. */
  near20(frame: Int16Array): Int16Array[] {
    const ref = this.refOf();
    // its far blocks are not all here yet (the agent's frames came late): it waits for them, after those waiting
    if (!this.waiting.length && ref <= this.farCount) return this.take(frame, ref);
    this.waiting.push({ frame: frame.slice(), ref });
    return this.drain();
  }

  /** The caller's frames whose far blocks are all here now (or that waited WAIT_MAX frames), in order. */
  private drain(): Int16Array[] {
    const out: Int16Array[] = [];
    while (this.waiting.length && (this.waiting[0]!.ref <= this.farCount || this.waiting.length > WAIT_MAX)) {
      const w = this.waiting.shift()!;
      for (const f of this.take(w.frame, Math.min(w.ref, this.farCount))) out.push(f);
    }
    return out;
  }

  /** A caller's frame compared from far block `ref`: the frames to pass on now. */
  private take(frame: Int16Array, ref: number): Int16Array[] {
    let loud = false;
    for (let i = 0; i + this.blockLen <= frame.length; i += this.blockLen) {
      const a = meanAbs(frame, i, this.blockLen);
      if (a > NEAR_FLOOR) loud = true;
      this.near[this.nearCount % HISTORY] = a;
      this.nearRef[this.nearCount % HISTORY] = ref;
      this.nearCount++;
    }
    if (this.nearCount % 10 < 2) {
      this.update(WINDOW, 0.8);
      this.followResidual();
    }
    // the agent has been silent for longer than any echo takes: nothing of it can come back
    if (this.farCount - this.lastFarLoud > MAX_LAG + 4) return this.release(frame);
    if (this.callerHang > 0 && !this.path) return this.release(frame);
    if (!this.path) {
      // a quiet frame while the agent's echo may come back: what the canceller left of it, or nothing
      if (!loud && !this.held.length) return [this.callerHang > 0 ? frame : this.silence];
      this.held.push(frame.slice());
      if (this.update(Math.min(SHORT + this.held.length * 2, WINDOW), 0.85)) return this.classifyHeld();
      if (this.held.length < HOLD_MAX) return [];
      // no echo path in 300 ms of loud audio: the caller
      this.callerHang = HANGOVER;
      this.stats.callerFrames += this.held.length;
      return this.held.splice(0);
    }
    if (this.held.length) {
      // the path was found by the steady estimate while frames were held: they go first, classified
      this.held.push(frame.slice());
      return this.classifyHeld();
    }
    const kind = this.classify(this.nearCount - frame.length / this.blockLen);
    return kind === 'caller' ? this.passOnset(frame) : this.holdOnset(frame, kind === 'echo');
  }

  /**
   * A frame taken for echo: a loud one waits (ONSET_MAX frames at most) in case the caller's word starts
   * there, its soft start ("s" of "stop") no louder than the echo's residue; a quiet one ends the run.
   */
  private holdOnset(frame: Int16Array, loud: boolean): Int16Array[] {
    if (!loud) return this.onset.length ? [...this.onset.splice(0).map(() => this.silence), this.silence] : [this.silence];
    this.onset.push(frame.slice());
    if (this.onset.length <= ONSET_MAX) return [];
    this.onset.shift();
    return [this.silence];
  }

  /** The caller's frame: the loud frames just before it were its start, and go first. */
  private passOnset(frame: Int16Array): Int16Array[] {
    if (!this.onset.length) return [frame];
    // taken for echo when they came, now the caller's
    this.stats.echoFrames -= this.onset.length;
    this.stats.callerFrames += this.onset.length;
    return [...this.onset.splice(0), frame];
  }

  private release(frame: Int16Array): Int16Array[] {
    if (this.callerHang > 0) this.callerHang--;
    return [...this.held.splice(0), ...this.onset.splice(0), frame];
  }

  private classifyHeld(): Int16Array[] {
    const frames = this.held.splice(0);
    const perFrame = frames[0]!.length / this.blockLen;
    let first = this.nearCount - frames.length * perFrame;
    return frames.map((f) => {
      const kind = this.classify(first);
      first += perFrame;
      return kind === 'caller' ? f : this.silence;
    });
  }

  /** The caller's (passed on), echo (loud, silenced) or quiet (silenced): the frame whose first block is near block `k0`. */
  private classify(k0: number): 'caller' | 'echo' | 'quiet' {
    const perFrame = this.silence.length / this.blockLen;
    let caller = false;
    let loud = false;
    for (let k = k0; k < k0 + perFrame; k++) {
      const x = this.near[k % HISTORY]!;
      if (x <= NEAR_FLOOR) continue;
      loud = true;
      if (x > MARGIN * this.predicted(k) + NEAR_FLOOR) caller = true;
    }
    if (caller) this.callerHang = HANGOVER;
    else if (this.callerHang > 0) this.callerHang--;
    if (caller || this.callerHang > 0) {
      if (loud) this.stats.callerFrames++;
      return 'caller';
    }
    if (!loud) return 'quiet';
    this.stats.echoFrames++;
    return 'echo';
  }

  /** The echo expected in near block k: the path's gain times the loudest far block around its lag (reverberation smears it). */
  private predicted(k: number): number {
    const ref = this.nearRef[k % HISTORY]! - this.lagBlocks;
    let m = 0;
    for (let j = ref - 3; j <= ref + 2; j++) if (j >= 0 && j < this.farCount && this.farCount - j < HISTORY) m = Math.max(m, this.far[j % HISTORY]!);
    return this.path!.gain * m;
  }

  /**
   * The echo canceller ahead of the guard (docs/ai.md "Turn-taking") leaves less and less of the echo: the
   * gain follows it down (at most 20 % per 100 ms) to the median near/far ratio at the path's lag over the
   * last second where the agent was loud, so the caller's quieter sounds over it (the "s" of "stop") are not
   * taken for echo. A caller talking only makes that ratio larger, so they never lower the gain.
   */
  private followResidual(): void {
    if (!this.path) return;
    const w = Math.min(WINDOW, this.nearCount);
    const ratios = this.ratios;
    let n = 0;
    for (let i = 0; i < w; i++) {
      const k = (this.nearCount - w + i) % HISTORY;
      const j = this.nearRef[k]! - this.lagBlocks;
      if (j < 0 || this.farCount - j >= HISTORY) continue;
      const y = this.far[j % HISTORY]!;
      if (y > FAR_FLOOR * 2) ratios[n++] = this.near[k]! / y;
    }
    if (n < 25) return;
    const median = ratios.subarray(0, n).sort()[n >> 1]!;
    if (median < this.path.gain) this.path = { ...this.path, gain: Math.max(median, this.path.gain * 0.8) };
  }

  /** Looks for the echo path over the last `w` near blocks; true when one with Pearson ≥ `min` was found (and adopted). */
  private update(want: number, min: number): boolean {
    // at the start of the call: what there is (the call was silent before)
    const w = Math.min(want, this.nearCount);
    if (w < SHORT) return false;
    let best = { rho: -1, d: 0 };
    const { xs, ys, lx, ly, loud } = this.scratch;
    let sx = 0;
    for (let i = 0; i < w; i++) sx += xs[i] = this.near[(this.nearCount - w + i) % HISTORY]!;
    if (sx / w < NEAR_AUDIBLE) return false;
    // compared where the caller's side is audible: silence before an onset would make any onset look alike. Over a
    // quarter of the floor, not half: a speakerphone's echo at -20 dB of the agent's voice has too few blocks
    // over half of it to be found within the hold (HOLD_MAX), and was passed on as the caller
    let n = 0;
    for (let i = 0; i < w; i++) if (xs[i]! > NEAR_AUDIBLE) loud[n++] = i;
    if (n < 25) return false;
    // no far block any lag reaches is audible (the agent silent for the window and the longest lag): no lag
    // can pass the far side's floor below, so none is looked at (the same answer, without the 61 correlations)
    if (this.lastFarAudible < this.nearRef[(this.nearCount - w) % HISTORY]! - MAX_LAG - 1) {
      this.candidate = null;
      return false;
    }
    for (let k = 0; k < n; k++) lx[k] = xs[loud[k]!]!;
    const near = moments(lx, n);
    for (let d = 0; d <= MAX_LAG; d++) {
      let ok = true;
      let sy = 0;
      for (let i = 0; i < w && ok; i++) {
        const j = this.nearRef[(this.nearCount - w + i) % HISTORY]! - d - 1;
        // before the first far block: the call was silent
        if (this.farCount - j >= HISTORY) ok = false;
        else sy += ys[i] = j < 0 ? 0 : this.far[j % HISTORY]!;
      }
      // past the history at this lag is past it at every longer one
      if (!ok) break;
      if (sy / w < FAR_FLOOR / 4) continue;
      for (let k = 0; k < n; k++) ly[k] = ys[loud[k]!]!;
      const rho = pearsonWith(near, lx, ly, n);
      if (rho > best.rho) best = { rho, d };
    }
    if (best.rho < min) {
      this.candidate = null;
      return false;
    }
    // a known path moves to another lag only on strong evidence
    if (this.path && Math.abs(best.d + 1 - this.lagBlocks) > 2 && best.rho < 0.9) return false;
    // a chance likeness of the caller's speech to the agent's varies from one estimate to the next; an echo's lag does not
    const agrees = this.candidate !== null && Math.abs(best.d - this.candidate) <= 2;
    this.candidate = best.d;
    if (!agrees) return false;
    const ratios = this.ratiosAt(best.d, w);
    if (ratios.length < 5) return false;
    // an echo is there whenever the agent is loud; a caller's speech that happens to look alike is not. A
    // first path must also explain the seconds before the window (the agent talking while the caller was
    // silent); a known one is followed over the window alone (the canceller may have left nothing of it since)
    if (!this.path && !this.explainsHistory(best.d, Math.min(Math.max(w, SEEN), this.nearCount))) return false;
    if (this.path && ratios.filter((r) => r > 0.02).length < 0.7 * ratios.length) return false;
    ratios.sort((a, b) => a - b);
    let gain = ratios[ratios.length >> 1]!;
    // an echo comes back attenuated: "echo" louder than what was sent is the caller's own speech
    if (gain > MAX_GAIN) return false;
    // the caller talking over the echo makes it look louder, a pause quieter: the gain moves slowly (5 % per 100 ms),
    // but at once when the envelopes agree closely (the echo is back: the canceller relearning a path that moved)
    if (this.path && best.rho < 0.9) gain = Math.max(this.path.gain * 0.95, Math.min(gain, this.path.gain * 1.05));
    this.lagBlocks = best.d + 1;
    this.path = { lagMs: this.lagBlocks * BLOCK_MS, gain, rho: best.rho };
    return true;
  }

  /**
   * Whether an echo at lag `d` was there in 70 % of the last `w` near blocks where the agent was loud:
   * near above 0.02 of far and above twice the line's own floor (its 20th percentile over those blocks), so
   * a noisy line's hiss does not pass for an echo; at one gain, as an echo is: the near/far ratios of those
   * blocks within FIRST_SPREAD (a caller talking over the agent, loud whatever the agent says, spreads them
   * by a factor of 5); and over at least FIRST_BLOCKS of the agent's loud blocks (a background's wander
   * can look like the first 100 ms of the agent's envelope).
   */
  private explainsHistory(d: number, w: number): boolean {
    const near: number[] = [];
    const all: number[] = [];
    for (let i = 0; i < w; i++) {
      const k = (this.nearCount - w + i) % HISTORY;
      all.push(this.near[k]!);
      const j = this.nearRef[k]! - d - 1;
      if (j < 0 || this.farCount - j >= HISTORY) continue;
      const y = this.far[j % HISTORY]!;
      if (y > FAR_FLOOR * 2) near.push(this.near[k]! / y, this.near[k]!);
    }
    all.sort((a, b) => a - b);
    const floor = all[Math.floor(all.length * 0.2)] ?? 0;
    const there: number[] = [];
    for (let i = 0; i < near.length; i += 2) if (near[i]! > 0.02 && near[i + 1]! > 2 * floor) there.push(Math.log10(near[i]!));
    const loud = near.length / 2;
    if (loud < FIRST_BLOCKS || there.length < 0.7 * loud) return false;
    there.sort((a, b) => a - b);
    return there[Math.floor(there.length * 0.75)]! - there[Math.floor(there.length * 0.25)]! <= FIRST_SPREAD;
  }

  /** near/far over the last `w` near blocks where the far block `d + 1` blocks before was loud. */
  private ratiosAt(d: number, w: number): number[] {
    const ratios: number[] = [];
    for (let i = 0; i < w; i++) {
      const k = (this.nearCount - w + i) % HISTORY;
      const j = this.nearRef[k]! - d - 1;
      if (this.farCount - j >= HISTORY) continue;
      const y = j < 0 ? 0 : this.far[j % HISTORY]!;
      if (y > FAR_FLOOR * 2) ratios.push(this.near[k]! / y);
    }
    return ratios;
  }
}

function meanAbs(x: Int16Array, from: number, n: number): number {
  let s = 0;
  for (let i = from; i < from + n; i++) s += Math.abs(x[i]!);
  return s / n;
}

/** The mean and the sum of squared deviations of the first `n` of `x` (the near side's, once per update). */
function moments(x: Float64Array, n: number): { mean: number; sxx: number } {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i]!;
  const mean = s / n;
  let sxx = 0;
  for (let i = 0; i < n; i++) sxx += (x[i]! - mean) * (x[i]! - mean);
  return { mean, sxx };
}

/** Pearson's correlation of the first `n` of `x` (its moments `m`) and `y`. */
function pearsonWith(m: { mean: number; sxx: number }, x: Float64Array, y: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += y[i]!;
  const my = s / n;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const b = y[i]! - my;
    sxy += (x[i]! - m.mean) * b;
    syy += b * b;
  }
  return m.sxx > 0 && syy > 0 ? sxy / Math.sqrt(m.sxx * syy) : 0;
}
