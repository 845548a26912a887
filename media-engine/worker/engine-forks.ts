/**
 * The audio forks of one media worker (engine.ts): a fork taps a leg, or a conference's mix, posts its
 * frames to the API thread and plays back what its consumer injects (a media stream, an agent's voice).
 * The owner (leg or conference) holds its taps too: when it goes, the engine drops them here (drop).
 */
import { ForkTap, type ForkMix, type ForkStats } from '../fork';
import { InjectMember, type ConferenceState } from './conference-fork';
import { EngineError } from './engine-error';
import type { Leg } from './leg';

/** How the registry finds a fork's owner (undefined when there is none): a leg (back from C if it ran there) or a conference. */
export interface ForkOwners {
  leg(id: string): Leg | undefined;
  conference(id: string): ConferenceState | undefined;
}

export class EngineForks {
  private readonly forks = new Map<string, { tap: ForkTap; owner: string }>();
  /** the legs with an early fork, which the engine also serves between their ticks (engine-parts.ts serveEarly) */
  earlyLegs: Leg[] = [];

  constructor(
    private readonly owners: ForkOwners,
    private readonly postFrame: (forkId: string, frame: Int16Array) => void,
    /** an injection that starts went out (ForkTap.started) */
    private readonly postStarted?: (forkId: string, at: number) => void,
  ) {}

  /**
   * Starts a fork; returns its rate. `legRate`: a leg's frames at its own rate (16000 on a G.722 or
   * Opus leg), a conference's mix at 16 kHz while it mixes at 16 kHz as the fork starts, else 8000.
   * `early`: a leg's `in` frames at its own rate as they are received (worker/leg-early.ts). `reportStarts`:
   * each injection that starts is reported when it goes out (postStarted); else nothing is posted.
   */
  start(ownerId: string, forkId: string, mix: ForkMix, maxInFlight: number, legRate: boolean, early = false, reportStarts = false): number {
    const c = this.owners.conference(ownerId);
    const leg = c ? undefined : this.owners.leg(ownerId);
    if (!c && !leg) throw new EngineError(`no such endpoint ${ownerId}`, 'ENOENDPOINT');
    if (early && (c || mix !== 'in' || !legRate)) throw new EngineError("an early fork is of a leg, its `in` audio at the leg's rate", 'EINVAL');
    const rate = legRate && (c ? c.mixer.widebandNow : leg!.wideband) ? 16000 : 8000;
    const tap = new ForkTap(forkId, mix, (frame) => this.postFrame(forkId, frame), maxInFlight, rate, undefined, early);
    const started = this.postStarted;
    if (started && reportStarts) tap.started = (at) => started(forkId, at);
    if (c) {
      c.forks.set(forkId, tap);
      // injected audio joins the conference as a participant that hears nothing
      c.mixer.join(new InjectMember(tap));
    } else leg!.forks.set(forkId, tap);
    this.forks.set(forkId, { tap, owner: ownerId });
    if (early) this.findEarlyLegs();
    return rate;
  }

  /** Stops the fork and detaches it from its owner; its figures, or null when there is no such fork. */
  stop(forkId: string): ForkStats | null {
    const f = this.forks.get(forkId);
    if (!f) return null;
    this.forks.delete(forkId);
    f.tap.close();
    this.owners.leg(f.owner)?.forks.delete(forkId);
    if (f.tap.early) this.findEarlyLegs();
    const c = this.owners.conference(f.owner);
    if (c) {
      c.forks.delete(forkId);
      c.mixer.leave(`fork:${forkId}`);
    }
    return f.tap.stats;
  }

  /** The taps' owner (a leg or a conference) is gone: its forks are closed and forgotten. */
  drop(taps: ReadonlyMap<string, ForkTap>): void {
    for (const [forkId, tap] of taps) {
      this.forks.delete(forkId);
      tap.close();
    }
    this.findEarlyLegs();
  }

  /** Each leg's early forks (Leg.earlyForks, read every tick), and the legs that have one. (The owner of a dropped fork is gone already: it is not found.) */
  private findEarlyLegs(): void {
    for (const leg of this.earlyLegs) leg.earlyForks = [];
    const legs = new Set<Leg>();
    for (const f of this.forks.values()) {
      const leg = f.tap.early ? this.owners.leg(f.owner) : undefined;
      if (!leg) continue;
      // a leg not in earlyLegs has none: it starts empty, and the loop above emptied those that had some
      legs.add(leg);
      leg.earlyForks.push(f.tap);
    }
    this.earlyLegs = [...legs];
  }

  ack(forkId: string, n: number): void {
    this.forks.get(forkId)?.tap.ack(n);
  }

  /** Drops the fork's injected audio not yet played (a Twilio stream's `clear`). */
  clear(forkId: string): void {
    this.forks.get(forkId)?.tap.clearInjected();
  }

  /** Audio a fork's consumer plays back, at 8 kHz or 16 kHz (`rate`); the fork's leg when this audio starts (none was queued), else null. */
  inject(forkId: string, samples: Int16Array, rate: 8000 | 16000): Leg | null {
    const f = this.forks.get(forkId);
    if (!f) return null;
    const starts = !f.tap.hasInjected;
    f.tap.inject(samples, rate);
    return starts ? (this.owners.leg(f.owner) ?? null) : null;
  }
}
