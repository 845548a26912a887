/**
 * Conference mixing helpers: Int32 accumulation (no overflow for any realistic party size),
 * N-1 outputs (everyone hears everyone but themselves), gain, saturation to 16 bits, and a short
 * linear fade whenever a participant's contribution starts or stops (join, leave, mute in), so
 * nobody hears a click. Nothing here allocates after a slot's first use.
 */
import { FRAME_SAMPLES, type Frame } from './frame';

/** Local copy: imported bindings compile to getters under some loaders, too slow in hot loops. */
const N = FRAME_SAMPLES;

const clip16 = (v: number) => (v > 32767 ? 32767 : v < -32768 ? -32768 : v);

/** acc[i] += round(frame[i]·gain). */
export function mixAdd(acc: Int32Array, frame: Int16Array, gain = 1): void {
  if (gain === 1) for (let i = 0; i < acc.length; i++) acc[i] += frame[i];
  else for (let i = 0; i < acc.length; i++) acc[i] += Math.round(frame[i] * gain);
}

/** out[i] = saturate16(acc[i]). */
export function clipTo16(out: Int16Array, acc: Int32Array): void {
  for (let i = 0; i < out.length; i++) out[i] = clip16(acc[i]);
}

/** out[i] = saturate16(acc[i] − own[i]): the N-1 mix for the participant whose share is `own`. */
export function mixMinusOne(out: Int16Array, acc: Int32Array, own: Int32Array): void {
  for (let i = 0; i < out.length; i++) out[i] = clip16(acc[i] - own[i]);
}

export interface MixBusOptions {
  /** Largest number of simultaneous participants. Default 128. */
  maxParticipants?: number;
  /** Length of the join/leave/mute fade in samples. Default 160 (one 20 ms frame); 0 = none. */
  fadeSamples?: number;
}

interface Slot {
  used: boolean;
  leaving: boolean;
  gain: number;
  muteIn: boolean;
  fadePos: number; // fade position 0..fadeLen (integer, so the ends are reached exactly)
  input: Int16Array | null; // this tick's frame
  own: Int32Array; // this tick's contribution (after gain and fade)
  ownZero: boolean; // own is all zeros (silent participant: its output is the total)
  out: Int16Array; // this tick's N-1 output
}

/**
 * A mixing bus for one conference. Each 20 ms tick: `input(slot, frame)` for every participant that
 * has audio, then `mix()`, then read `output(slot)` (N-1) and `total` (everyone, for the recording).
 */
export class MixBus {
  /** The whole mix of the last tick (everyone), saturated to 16 bits. */
  readonly total: Int16Array = new Int16Array(N);
  private readonly acc = new Int32Array(N);
  private readonly slots: Slot[] = [];
  private readonly fadeLen: number;
  private readonly instant: boolean;
  private readonly max: number;
  private active = 0;

  constructor(opts: MixBusOptions = {}) {
    this.max = opts.maxParticipants ?? 128;
    const fs = opts.fadeSamples ?? N;
    if (!(fs >= 0)) throw new RangeError('MixBus: fadeSamples must be >= 0');
    this.instant = fs === 0;
    this.fadeLen = Math.max(1, Math.round(fs));
  }

  /** Participants currently mixed (including ones still fading out). */
  get size(): number {
    return this.active;
  }

  /** Add a participant, faded in from silence; returns its slot number. */
  join(opts: { gain?: number; muteIn?: boolean } = {}): number {
    let i = this.slots.findIndex((s) => !s.used);
    if (i < 0) {
      if (this.slots.length >= this.max) throw new Error(`MixBus: full (${this.max} participants)`);
      i = this.slots.length;
      this.slots.push({
        used: false,
        leaving: false,
        gain: 1,
        muteIn: false,
        fadePos: 0,
        input: null,
        own: new Int32Array(N),
        ownZero: true,
        out: new Int16Array(N),
      });
    }
    const s = this.slots[i];
    Object.assign(s, { used: true, leaving: false, gain: opts.gain ?? 1, muteIn: opts.muteIn ?? false, fadePos: 0, input: null });
    s.out.fill(0);
    s.own.fill(0);
    s.ownZero = true;
    this.active++;
    return i;
  }

  /** Remove a participant: its voice fades out during the next mix(), then the slot is freed. */
  leave(slot: number): void {
    const s = this.slot(slot);
    s.leaving = true;
  }

  setGain(slot: number, gain: number): void {
    if (!(gain >= 0)) throw new RangeError('MixBus: gain must be >= 0');
    this.slot(slot).gain = gain;
  }

  /** Mute what this participant says (faded); what they hear is the caller's business (mute out). */
  setMuteIn(slot: number, muted: boolean): void {
    this.slot(slot).muteIn = muted;
  }

  /** This tick's audio from a participant (read during mix(); absent = silence). */
  input(slot: number, frame: Frame): void {
    if (frame.length !== N) throw new RangeError(`MixBus: frame must have ${N} samples`);
    this.slot(slot).input = frame;
  }

  /** Mix this tick: fills every participant's output and `total`, then clears the inputs. */
  mix(): void {
    const acc = this.acc;
    acc.fill(0);
    const len = this.fadeLen;
    for (const s of this.slots) {
      if (!s.used) continue;
      const own = s.own;
      const target = s.leaving || s.muteIn ? 0 : len;
      if (this.instant) s.fadePos = target;
      const x = s.input;
      if (s.fadePos === target) {
        // Steady state: plain gain (or nothing).
        if (target === 0 || x === null) {
          if (!s.ownZero) own.fill(0);
          s.ownZero = true;
          continue; // adds nothing to the mix
        }
        s.ownZero = false;
        if (s.gain === 1) {
          for (let i = 0; i < N; i++) {
            const v = x[i];
            own[i] = v;
            acc[i] += v;
          }
        } else {
          const g = s.gain;
          for (let i = 0; i < N; i++) {
            const v = Math.round(x[i] * g);
            own[i] = v;
            acc[i] += v;
          }
        }
        continue;
      } else {
        let pos = s.fadePos;
        const dir = target > pos ? 1 : -1;
        for (let i = 0; i < N; i++) {
          if (pos !== target) pos += dir;
          own[i] = x === null ? 0 : Math.round((x[i] * s.gain * pos) / len);
        }
        s.fadePos = pos;
        s.ownZero = false;
      }
      for (let i = 0; i < N; i++) acc[i] += own[i];
    }
    clipTo16(this.total, acc);
    for (const s of this.slots) {
      if (!s.used) continue;
      if (s.ownZero) s.out.set(this.total);
      else mixMinusOne(s.out, acc, s.own);
      s.input = null;
      if (s.leaving && s.fadePos === 0) {
        s.used = false;
        this.active--;
      }
    }
  }

  /** The N-1 mix of the last tick for this participant (a buffer reused every tick). */
  output(slot: number): Int16Array {
    return this.slot(slot).out;
  }

  private slot(i: number): Slot {
    const s = this.slots[i];
    if (!s || !s.used) throw new RangeError(`MixBus: no participant in slot ${i}`);
    return s;
  }
}
