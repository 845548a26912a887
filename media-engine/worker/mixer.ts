/**
 * Conference mixing inside a worker: every participant hears everyone but themselves (N-1 mixes),
 * computed as one 32-bit total minus the participant's own contribution, clipped to 16 bits.
 * Contributions fade in over the first frame after a join and out over one frame after a leave,
 * so nobody hears a click. A member may whisper (`heardOnlyBy`): its audio reaches that one member
 * and no other (a supervisor coaching an agent; docs/pbx.md "Supervisor"), never the full mix. A
 * member may also go unheard by some members (`notHeardBy`: mod_conference's relate nospeak/nohear,
 * esl/conference/relate.ts): its audio is taken out of their N-1 mixes, in 32 bits before the clip.
 *
 * Rates: the 8 kHz mix is always made (narrowband members, forks, an 8 kHz recording), from every
 * member's 8 kHz frame (a wideband leg's is its 16 kHz audio resampled down, as leg-wide.ts makes
 * it anyway). While any member is wideband (a G.722 or Opus leg, or a wideband link), the room also
 * mixes at 16 kHz: wideband members give their 16 kHz frame and hear a 16 kHz N-1 mix
 * (`mixOutWide`), a narrowband member's frame is resampled up into it (one speexdsp resampler per
 * such member, made the first time the room turns wideband). A narrowband member hears the 8 kHz
 * N-1 mix, exactly as in an all-G.711 room, which costs nothing more than before; a wideband member
 * gets only its 16 kHz N-1 mix (`mixedWide`), no 8 kHz one it would not use.
 */
import { Resampler } from '../codecs';
import { TalkDetector } from '../dsp/talk';

const FRAME = 160;
const WIDE = 320;
/** no contribution to take out */
const NONE: Int16Array[] = [];

export interface MixMember {
  readonly id: string;
  /** this tick's audio from the participant at 8 kHz, or null when it has none */
  input(): Int16Array | null;
  /** receives the participant's N-1 mix for this tick at 8 kHz */
  readonly mixOut: Int16Array;
  muteIn: boolean; // others don't hear this participant
  muteOut: boolean; // this participant hears nothing ("deaf")
  /** when set, only the member of this id hears this participant (a whisper); null: everyone does */
  heardOnlyBy?: string | null;
  /** the members (ids) that do not hear this participant; null or empty: all hear it (a whisperer's own rule wins) */
  notHeardBy?: ReadonlySet<string> | null;
  /** true while the participant's audio is 16 kHz (then `inputWide` and `mixOutWide` are used) */
  readonly wideband?: boolean;
  /** this tick's audio at 16 kHz, or null when it has none */
  inputWide?(): Int16Array | null;
  /** receives the participant's 16 kHz N-1 mix when the room mixes at 16 kHz */
  readonly mixOutWide?: Int16Array;
  /** set by the mixer each tick: true when `mixOutWide` holds this tick's mix */
  mixedWide?: boolean;
}

interface Slot {
  member: MixMember;
  contrib: Int16Array;
  has: boolean;
  age: number; // ticks since join, for the fade-in
  leaving: boolean;
  /** the 16 kHz contribution, and a narrowband member's resampler up to it (made when first needed) */
  wide: { contrib: Int16Array; has: boolean; up: Resampler | null } | null;
  /** whether the member is talking, from the audio it puts into the mix (dsp/talk.ts) */
  talk: TalkDetector;
}

function clip(v: number): number {
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}

/** N-1 mixes of `inputs` (null = silent) into `outs`, exactly as the mixer does once members are settled. */
export function mixNMinus1(inputs: (Int16Array | null)[], outs: Int16Array[]): Int16Array {
  const n = outs[0]?.length ?? FRAME;
  const total = new Int32Array(n);
  for (const f of inputs) if (f) for (let i = 0; i < n; i++) total[i] += f[i];
  inputs.forEach((f, k) => {
    const o = outs[k];
    for (let i = 0; i < n; i++) o[i] = clip(total[i] - (f ? f[i] : 0));
  });
  const mix = new Int16Array(n);
  for (let i = 0; i < n; i++) mix[i] = clip(total[i]);
  return mix;
}

/** The contribution `c` of a slot this tick from frame `f` (null: none); returns whether it has one. */
function contribute(c: Int16Array, f: Int16Array | null, age: number, leaving: boolean, had: boolean): boolean {
  const n = c.length;
  if (leaving) {
    // fade the last frame heard from the leaver down to zero
    if (had) for (let i = 0; i < n; i++) c[i] = (c[i] * (n - i)) / n;
    return had;
  }
  if (!f) return false;
  if (age === 0) for (let i = 0; i < n; i++) c[i] = (f[i] * i) / n;
  else c.set(f);
  return true;
}

/** `o` = the N-1 mix of a member without the contributions `cut` (members it does not hear), in 32 bits, then clipped. */
function hearExcept(o: Int16Array, total: Int32Array, own: Int16Array, has: boolean, cut: Int16Array[], deaf: boolean, age: number): void {
  const n = o.length;
  if (deaf) o.fill(0);
  else
    for (let i = 0; i < n; i++) {
      let z = total[i] - (has ? own[i] : 0);
      for (let k = 0; k < cut.length; k++) z -= cut[k][i];
      o[i] = clip(z);
    }
  if (age === 0) for (let i = 0; i < n; i++) o[i] = (o[i] * i) / n;
}

/** `o` = the N-1 mix of a member from `total`, `mix` and its contribution; faded in on its first tick. */
function hear(o: Int16Array, total: Int32Array, mix: Int16Array, own: Int16Array, has: boolean, deaf: boolean, age: number): void {
  const n = o.length;
  if (deaf) o.fill(0);
  else if (has) for (let i = 0; i < n; i++) o[i] = clip(total[i] - own[i]);
  else o.set(mix);
  if (age === 0) for (let i = 0; i < n; i++) o[i] = (o[i] * i) / n; // the newcomer's ear fades in too
}

export class ConferenceMixer {
  private slots: Slot[] = [];
  private readonly total = new Int32Array(FRAME);
  /** this tick's full mix at 8 kHz (what forks and an 8 kHz recording hear) */
  readonly mix = new Int16Array(FRAME);
  /** the 16 kHz total and full mix, made when the room first turns wideband */
  private totalWide: Int32Array | null = null;
  mixWide: Int16Array | null = null;
  /** true when this tick was mixed at 16 kHz too (`mixWide` holds it) */
  wide = false;

  /** `onTalk`: a member started or stopped talking (dsp/talk.ts), called inside the tick. */
  constructor(
    readonly id: string,
    private readonly onTalk?: (memberId: string, talking: boolean) => void,
  ) {}

  get size(): number {
    return this.slots.filter((s) => !s.leaving).length;
  }

  has(id: string): boolean {
    return this.slots.some((s) => s.member.id === id && !s.leaving);
  }

  /** True when a member present now is wideband (the room mixes at 16 kHz). */
  get widebandNow(): boolean {
    const slots = this.slots;
    for (let k = 0; k < slots.length; k++) if (!slots[k].leaving && slots[k].member.wideband) return true;
    return false;
  }

  join(member: MixMember): void {
    if (this.has(member.id)) return;
    this.dropSlots(member.id);
    this.slots.push({ member, contrib: new Int16Array(FRAME), has: false, age: 0, leaving: false, wide: null, talk: new TalkDetector() });
  }

  /** The participant fades out over the next tick, then is gone. */
  leave(id: string): void {
    const s = this.slots.find((x) => x.member.id === id && !x.leaving);
    if (!s) return;
    s.leaving = true;
    s.member.mixOut.fill(0);
    s.member.mixedWide = false;
  }

  memberIds(): string[] {
    return this.slots.filter((s) => !s.leaving).map((s) => s.member.id);
  }

  /** One 20 ms mix. */
  tick(): void {
    const wide = (this.wide = this.widebandNow);
    const total = this.total;
    total.fill(0);
    const tw = wide ? (this.totalWide ??= new Int32Array(WIDE)) : null;
    if (tw) tw.fill(0);
    const slots = this.slots;
    // a whisper is rare: without one, nobody's ear looks through the slots for it (no N² per tick)
    let whispering = false;
    // members unheard by some (relate): rare too, their listeners' mixes are the only ones that look
    let cutting = false;
    for (let k = 0; k < slots.length; k++) {
      const s = slots[k];
      const m = s.member;
      if (m.heardOnlyBy && !s.leaving) whispering = true;
      if (m.notHeardBy?.size && !m.heardOnlyBy) cutting = true;
      const f = s.leaving || m.muteIn ? null : m.input();
      const had = s.has;
      if (!s.leaving && this.onTalk) {
        const t = s.talk.push(f);
        if (t) this.onTalk(m.id, t === 'start');
      }
      s.has = contribute(s.contrib, f, s.age, s.leaving, had);
      if (s.has && !m.heardOnlyBy) for (let i = 0; i < FRAME; i++) total[i] += s.contrib[i];
      if (!tw) continue;
      const w = (s.wide ??= { contrib: new Int16Array(WIDE), has: false, up: null });
      let fw: Int16Array | null = null;
      if (!s.leaving && !m.muteIn) {
        if (m.wideband && m.inputWide) fw = m.inputWide();
        else if (f) {
          const up = (w.up ??= new Resampler(8000, 16000));
          up.process(f, w.contrib, FRAME);
          fw = w.contrib;
        }
      }
      w.has = contribute(w.contrib, fw, s.age, s.leaving, w.has);
      if (w.has && !m.heardOnlyBy) for (let i = 0; i < WIDE; i++) tw[i] += w.contrib[i];
    }
    for (let i = 0; i < FRAME; i++) this.mix[i] = clip(total[i]);
    const mw = tw ? (this.mixWide ??= new Int16Array(WIDE)) : null;
    if (tw && mw) for (let i = 0; i < WIDE; i++) mw[i] = clip(tw[i]);
    for (let k = 0; k < slots.length; k++) {
      const s = slots[k];
      if (s.leaving) continue;
      const m = s.member;
      const ow = m.mixOutWide;
      // a whisperer is not in the total: it hears the full mix, as a member with nothing to take out
      if (tw && mw && s.wide && ow && m.wideband) {
        // a wideband member hears the 16 kHz mix only: its 8 kHz N-1 mix would go unused
        const cut = cutting ? this.unheardBy(m.id, true) : NONE;
        if (cut.length) hearExcept(ow, tw, s.wide.contrib, s.wide.has && !m.heardOnlyBy, cut, m.muteOut, s.age);
        else hear(ow, tw, mw, s.wide.contrib, s.wide.has && !m.heardOnlyBy, m.muteOut, s.age);
        if (whispering && !m.muteOut) this.addWhispers(m.id, ow, true);
        m.mixedWide = true;
      } else {
        const cut = cutting ? this.unheardBy(m.id, false) : NONE;
        if (cut.length) hearExcept(m.mixOut, total, s.contrib, s.has && !m.heardOnlyBy, cut, m.muteOut, s.age);
        else hear(m.mixOut, total, this.mix, s.contrib, s.has && !m.heardOnlyBy, m.muteOut, s.age);
        if (whispering && !m.muteOut) this.addWhispers(m.id, m.mixOut, false);
        if (m.mixedWide) m.mixedWide = false;
      }
      s.age++;
    }
    let gone = false;
    for (let k = 0; k < slots.length; k++) if (slots[k].leaving) gone = true;
    if (gone) this.dropSlots(null);
  }

  /** Removes leaving slots (and `id`'s, if given), freeing their resamplers. */
  private dropSlots(id: string | null): void {
    this.slots = this.slots.filter((s) => {
      const keep = !s.leaving && s.member.id !== id;
      if (!keep) s.wide?.up?.close();
      return keep;
    });
  }

  /** Frees every member's resampler. */
  close(): void {
    for (const s of this.slots) s.wide?.up?.close();
    this.slots = [];
  }

  /** The contributions in this tick's total (8 kHz, or 16 kHz when `wide`) of the members `id` does not hear. */
  private unheardBy(id: string, wide: boolean): Int16Array[] {
    const out: Int16Array[] = [];
    for (let k = 0; k < this.slots.length; k++) {
      const w = this.slots[k];
      if (w.member.id === id || w.member.heardOnlyBy || !w.member.notHeardBy?.has(id)) continue;
      const c = wide ? (w.wide?.has ? w.wide.contrib : null) : w.has ? w.contrib : null;
      if (c) out.push(c);
    }
    return out;
  }

  /** Adds to `o` (8 kHz, or 16 kHz when `wide`) the audio of the members whispering to `id` this tick. */
  private addWhispers(id: string, o: Int16Array, wide: boolean): void {
    for (let k = 0; k < this.slots.length; k++) {
      const w = this.slots[k];
      if (w.leaving || w.member.heardOnlyBy !== id) continue;
      const c = wide ? (w.wide?.has ? w.wide.contrib : null) : w.has ? w.contrib : null;
      if (!c) continue;
      for (let i = 0; i < o.length; i++) o[i] = clip(o[i] + c[i]);
    }
  }
}
