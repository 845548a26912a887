/**
 * Conference mixing inside a worker: every participant hears everyone but themselves (N-1 mixes),
 * computed as one 32-bit total minus the participant's own contribution, clipped to 16 bits.
 * Contributions fade in over the first frame after a join and out over one frame after a leave,
 * so nobody hears a click. A member may whisper (`heardOnlyBy`): its audio reaches that one member
 * and no other (a supervisor coaching an agent; docs/pbx.md "Supervisor"), never the full mix.
 */

const FRAME = 160;

export interface MixMember {
  readonly id: string;
  /** this tick's audio from the participant, or null when it has none */
  input(): Int16Array | null;
  /** receives the participant's N-1 mix for this tick */
  readonly mixOut: Int16Array;
  muteIn: boolean; // others don't hear this participant
  muteOut: boolean; // this participant hears nothing ("deaf")
  /** when set, only the member of this id hears this participant (a whisper); null: everyone does */
  heardOnlyBy?: string | null;
}

interface Slot {
  member: MixMember;
  contrib: Int16Array;
  has: boolean;
  age: number; // ticks since join, for the fade-in
  leaving: boolean;
}

function clip(v: number): number {
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v;
}

/** N-1 mixes of `inputs` (null = silent) into `outs`, exactly as the mixer does once members are settled. */
export function mixNMinus1(inputs: (Int16Array | null)[], outs: Int16Array[]): Int16Array {
  const total = new Int32Array(FRAME);
  for (const f of inputs) if (f) for (let i = 0; i < FRAME; i++) total[i] += f[i];
  inputs.forEach((f, k) => {
    const o = outs[k];
    for (let i = 0; i < FRAME; i++) o[i] = clip(total[i] - (f ? f[i] : 0));
  });
  const mix = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) mix[i] = clip(total[i]);
  return mix;
}

export class ConferenceMixer {
  private slots: Slot[] = [];
  private readonly total = new Int32Array(FRAME);
  /** this tick's full mix (what a conference recording or fork hears) */
  readonly mix = new Int16Array(FRAME);

  constructor(readonly id: string) {}

  get size(): number {
    return this.slots.filter((s) => !s.leaving).length;
  }

  has(id: string): boolean {
    return this.slots.some((s) => s.member.id === id && !s.leaving);
  }

  join(member: MixMember): void {
    if (this.has(member.id)) return;
    this.slots = this.slots.filter((s) => s.member.id !== member.id);
    this.slots.push({ member, contrib: new Int16Array(FRAME), has: false, age: 0, leaving: false });
  }

  /** The participant fades out over the next tick, then is gone. */
  leave(id: string): void {
    const s = this.slots.find((x) => x.member.id === id && !x.leaving);
    if (!s) return;
    s.leaving = true;
    s.member.mixOut.fill(0);
  }

  memberIds(): string[] {
    return this.slots.filter((s) => !s.leaving).map((s) => s.member.id);
  }

  /** One 20 ms mix. */
  tick(): void {
    const total = this.total;
    total.fill(0);
    for (const s of this.slots) {
      const c = s.contrib;
      if (s.leaving) {
        // fade the last frame heard from the leaver down to zero
        if (s.has) for (let i = 0; i < FRAME; i++) c[i] = (c[i] * (FRAME - i)) / FRAME;
      } else {
        const f = s.member.muteIn ? null : s.member.input();
        if (!f) {
          s.has = false;
        } else {
          s.has = true;
          if (s.age === 0) for (let i = 0; i < FRAME; i++) c[i] = (f[i] * i) / FRAME;
          else c.set(f);
        }
      }
      if (s.has && !s.member.heardOnlyBy) for (let i = 0; i < FRAME; i++) total[i] += c[i];
    }
    for (let i = 0; i < FRAME; i++) this.mix[i] = clip(total[i]);
    for (const s of this.slots) {
      if (s.leaving) continue;
      const o = s.member.mixOut;
      if (s.member.muteOut) o.fill(0);
      else if (s.has && !s.member.heardOnlyBy) for (let i = 0; i < FRAME; i++) o[i] = clip(total[i] - s.contrib[i]);
      else for (let i = 0; i < FRAME; i++) o[i] = this.mix[i];
      if (!s.member.muteOut) this.addWhispers(s.member.id, o);
      if (s.age === 0) for (let i = 0; i < FRAME; i++) o[i] = (o[i] * i) / FRAME; // the newcomer's ear fades in too
      s.age++;
    }
    this.slots = this.slots.filter((s) => !s.leaving);
  }

  /** Adds to `o` the audio of the members whispering to `id` this tick. */
  private addWhispers(id: string, o: Int16Array): void {
    for (const w of this.slots) {
      if (w.leaving || !w.has || w.member.heardOnlyBy !== id) continue;
      for (let i = 0; i < FRAME; i++) o[i] = clip(o[i] + w.contrib[i]);
    }
  }
}
