/**
 * When one media worker serves what it holds (engine.ts): the 20 ms clock, run only while there is
 * something to serve; the phases of its period and the slot each leg is served in; the bridged pairs
 * served in C (c-legs.ts); one leg's failure in a tick kept its own; and the cost of each period. The
 * engine owns the legs, conferences, links and forks and their operations; this serves them.
 */
import { TickClock } from './clock';
import { rtpIoTickEnd, rtpIoTickStart } from './rtp-transport';
import { CLegs } from './c-legs';
import { checkRx } from './rx-watch';
import { receiveSlot, sendSlot, serveEarly, slotsIn, soonestSlot, workerFigures } from './engine-parts';
import type { ConferenceState } from './conference-fork';
import { serveConference } from './conference-fork';
import type { EngineForks } from './engine-forks';
import type { FrameLink } from './link';
import type { Leg } from './leg';

const DEFAULT_PHASES = 4;

/** What the engine holds, as the ticks serve it (the engine's own maps, read at each tick). */
export interface Served {
  legs: Map<string, Leg>;
  conferences: ReadonlyMap<string, ConferenceState>;
  links: ReadonlyMap<string, { link: FrameLink }>;
  forks: EngineForks;
}

export class EngineTicks {
  /** phases of the 20 ms period; each leg is served in one of them (its slot) */
  readonly phases: number;
  /** arrays, not Sets: the tick walks them with an index (a Set iterator allocates) */
  private readonly slots: Leg[][];
  /** plain G.711 bridged pairs served in C on the ring (c-legs.ts), null where they cannot be */
  readonly cLegs: CLegs | null;
  readonly clock: TickClock;
  /** cost of serving every leg once (all phases of one 20 ms period), ms */
  private readonly tickCost = new Float64Array(3000);
  private periods = 0;
  private periodCost = 0;
  private rxCheckAt = 0; // when the legs' receive watches are looked at next (rx-watch.ts)
  private readonly failedLegs = new WeakSet<Leg>();

  constructor(
    private readonly served: Served,
    phases = DEFAULT_PHASES,
  ) {
    this.phases = Math.max(1, Math.min(10, Math.floor(phases)));
    this.slots = Array.from({ length: this.phases }, () => [] as Leg[]);
    this.cLegs = CLegs.start(this.slots[0]);
    // a stall of up to ~5 periods is caught up, as with one phase. The clock runs only while the worker
    // has something to serve (wake, idle): idle, its 200 wakes a second cost ~5 % of a core for nothing
    this.clock = new TickClock((now, skipped, index) => this.tick(now, skipped, index), 20 / this.phases, 5 * this.phases);
  }

  /** The clock runs (from a new period's cost) if it stood still: something was added to serve. */
  wake(): void {
    if (this.clock.isRunning) return;
    this.periodCost = 0;
    this.clock.startClock();
  }

  /** True when the clock has nothing left to serve (checked at the end of each tick). */
  private get idle(): boolean {
    return this.served.legs.size === 0 && this.served.conferences.size === 0 && this.served.links.size === 0;
  }

  /**
   * One phase of the 20 ms period: the legs of this slot receive, the conferences mix (slot 0, where
   * their members and bridged legs live, so a frame goes in and out in the same tick), the legs send.
   * Spreading legs over slots spreads the worker's packets over the period: a leg's packet leaves at
   * its own fixed offset, not behind every other leg's send.
   */
  private tick(now: number, skippedTicks: number, index: number): void {
    const t0 = performance.now();
    rtpIoTickStart(); // an io_uring worker: what arrived on every socket, in one system call
    const { legs: all, conferences, links, forks } = this.served;
    const P = this.phases;
    const slot = index % P;
    // after a stall the skipped time still passes on the RTP clock (the far end hears a gap, not a shift)
    if (skippedTicks > 0) {
      // (a leg in C gets it from the C legs' next tick, or at its move back to JS)
      for (const leg of all.values()) if (!this.cLegs?.has(leg)) leg.skip(slotsIn(leg.slot, index - skippedTicks, index - 1, P));
      this.cLegs?.skip(slotsIn(0, index - skippedTicks, index - 1, P));
    }
    if (slot === 0) this.cLegs?.review(); // bridged pairs with nothing else to do move to C
    const legs = this.slots[slot];
    receiveSlot(legs, index, P, now, this.onLegFailed);
    if (forks.earlyLegs.length) serveEarly(forks.earlyLegs, slot, this.onLegFailed);
    if (slot === 0) {
      if (links.size) for (const l of links.values()) l.link.advance(); // (a Map iterator allocates: not when empty)
      for (const c of conferences.values()) serveConference(c);
      for (const l of links.values()) l.link.flush();
    }
    sendSlot(legs, index, now, this.onLegFailed);
    // an io_uring worker: this tick's sends, in one system call (with the C legs served in it in slot 0)
    if (this.cLegs) this.cLegs.endTick(slot === 0, now, index);
    else rtpIoTickEnd();
    if (now >= this.rxCheckAt) this.rxCheckAt = now + checkRx(all, this.cLegs);
    this.periodCost += performance.now() - t0;
    if (slot === P - 1) {
      this.tickCost[this.periods++ % this.tickCost.length] = this.periodCost;
      this.periodCost = 0;
    }
    if (this.idle) this.clock.stop();
  }

  /** One leg's failure in a tick is its own: it is reported once and the other legs still run. */
  private readonly onLegFailed = (leg: Leg, e: unknown): void => {
    if (this.failedLegs.has(leg)) return;
    this.failedLegs.add(leg);
    process.emitWarning(`media leg tick failed: ${(e as Error).stack ?? String(e)}`);
  };

  /** Serves the leg in `slot` from now on (slot 0: with the conferences and links). */
  place(leg: Leg, slot: number): void {
    if (leg.slot === slot && this.slots[slot].includes(leg)) return;
    this.unplace(leg);
    leg.slot = slot;
    this.slots[slot].push(leg);
  }

  /** A new leg goes in the slot with the fewest legs. */
  placeNew(leg: Leg): void {
    let best = 0;
    for (let i = 1; i < this.slots.length; i++) if (this.slots[i].length < this.slots[best].length) best = i;
    this.place(leg, best);
  }

  unplace(leg: Leg): void {
    const list = this.slots[leg.slot];
    const i = list ? list.indexOf(leg) : -1;
    if (i >= 0) list.splice(i, 1);
  }

  /** A leg on its own (no bridge, no conference) whose injected audio starts: served in the soonest slot it may be (engine-parts.ts soonestSlot). */
  hurry(leg: Leg): void {
    const slot = !leg.feed && !leg.conferenceId && this.clock.isRunning ? soonestSlot(leg, this.clock.nextIndex, this.phases) : null;
    if (slot !== null) this.place(leg, slot);
  }

  /** The worker's figures (engine-parts.ts workerFigures) with what it holds. */
  figures() {
    const { legs, conferences } = this.served;
    return workerFigures(this.clock, this.tickCost, this.periods, { legs: legs.size, cLegs: this.cLegs?.size ?? 0, cLegSyncs: this.cLegs?.syncs ?? 0, conferences: conferences.size });
  }

  resetStats(): void {
    this.clock.stats.ticks = this.clock.stats.resyncs = this.periods = 0;
  }
}
