/**
 * Parts of the engine (engine.ts, engine-tick.ts): serving the legs of a slot in a tick, what it reports (one leg's
 * RTP and RTCP counters, the worker's own figures: socket kind, clock lateness, cost of a 20 ms period),
 * and how many of a leg's slots a stall skipped.
 */
import type { TickClock } from './clock';
import { Leg } from './leg';
import { rtpIoFallback, rtpIoKind, rtpRingCounters } from './rtp-transport';

/**
 * The receive half of a tick for the legs of its slot; try/catch per leg, no closure per leg: this runs
 * for every leg 50 times a second. A leg moved to another slot (conference, bridge) is served once a
 * period, never twice in half a period (`due`).
 */
export function receiveSlot(legs: Leg[], index: number, phases: number, now: number, failed: (leg: Leg, e: unknown) => void): void {
  for (let i = 0; i < legs.length; i++) {
    const leg = legs[i];
    leg.due = index - leg.lastTick >= phases / 2;
    if (!leg.due) continue;
    try {
      leg.receivePhase(now);
    } catch (e) {
      failed(leg, e);
    }
  }
}

/**
 * The legs with an early fork, at a tick not their own (or one they were not due in): what came since
 * their tick is handed to the fork now (Leg.receiveBetween), so it waits a phase, not a period.
 */
export function serveEarly(legs: Leg[], slot: number, failed: (leg: Leg, e: unknown) => void): void {
  for (let i = 0; i < legs.length; i++) {
    const leg = legs[i];
    if (leg.slot === slot && leg.due) continue; // served in full this tick
    try {
      leg.receiveBetween();
    } catch (e) {
      failed(leg, e);
    }
  }
}

/**
 * Where a leg goes whose injected audio starts (an agent's reply, a stream's first media), rather than
 * wait for its own slot, up to a period: the slot of the first tick from `next` on where it may be served
 * again (half a period after its last, as receiveSlot's `due` asks); null when its own slot comes as soon.
 * Its packets keep a 20 ms cadence from there: one interval is shorter, which the far end takes as jitter.
 */
export function soonestSlot(leg: Leg, next: number, phases: number): number | null {
  const first = Math.max(next, leg.lastTick + Math.ceil(phases / 2));
  const own = next + ((((leg.slot - next) % phases) + phases) % phases);
  return own <= first ? null : first % phases;
}

/** The send half of a tick for the legs that were due in its receive half. */
export function sendSlot(legs: Leg[], index: number, now: number, failed: (leg: Leg, e: unknown) => void): void {
  for (let i = 0; i < legs.length; i++) {
    const leg = legs[i];
    if (!leg.due) continue;
    leg.lastTick = index;
    try {
      leg.sendPhase(now);
    } catch (e) {
      failed(leg, e);
    }
  }
}

/** How many ticks in [from, to] fall in `slot` (ticks are numbered, slot = index mod phases). */
export function slotsIn(slot: number, from: number, to: number, phases: number): number {
  if (to < from) return 0;
  const upTo = (x: number) => Math.floor((x - slot + phases) / phases); // slots in [slot - phases .. x]
  return upTo(to) - upTo(from - 1);
}

/** A leg's counters, jitter buffer, codec and what the far end said in RTCP (copies, not live objects). */
export function legStats(leg: Leg) {
  const rtcp = leg.session.rtcpIn;
  return {
    ...leg.session.counters(),
    jitterTargetFrames: leg.session.jitter.stats.targetFrames,
    jitterBufferMs: leg.session.jitter.stats.targetFrames * 20,
    jitterDepthFrames: leg.session.jitter.depthFrames,
    codec: leg.session.media?.codec ?? null,
    ptimeMs: leg.session.media?.ptime ?? 20,
    rtcp: {
      ...rtcp,
      lastSender: rtcp.lastSender && { ...rtcp.lastSender },
      lastReportOnUs: rtcp.lastReportOnUs && { ...rtcp.lastReportOnUs },
      voipMetrics: rtcp.voipMetrics && { ...rtcp.voipMetrics },
    },
  };
}

/** The worker's figures: `tickCost` holds the cost of the last `periods` 20 ms periods (a ring), ms. */
export function workerFigures(clock: TickClock, tickCost: Float64Array, periods: number, counts: { legs: number; cLegs: number; cLegSyncs: number; conferences: number }) {
  const s = clock.stats;
  const n = Math.min(s.ticks, s.lateness.length);
  const late = Array.from(s.lateness.subarray(0, n)).sort((a, b) => a - b);
  const cost = Array.from(tickCost.subarray(0, Math.min(periods, tickCost.length))).sort((a, b) => a - b);
  const pct = (arr: number[], p: number) => (arr.length ? arr[Math.min(arr.length - 1, Math.floor(arr.length * p))] : 0);
  return {
    /** the RTP socket kind this worker really uses */
    rtpIo: rtpIoKind(),
    /** why the worker asked for 'uring' and runs 'native' (the kernel refused io_uring), or null */
    rtpIoFallback: rtpIoFallback(),
    /** the ring's system calls and packets since the worker started ('uring' only) */
    rtpRing: rtpRingCounters(),
    legs: counts.legs,
    cLegs: counts.cLegs,
    cLegSyncs: counts.cLegSyncs,
    conferences: counts.conferences,
    ticks: s.ticks,
    resyncs: s.resyncs,
    lateP50: pct(late, 0.5),
    lateP99: pct(late, 0.99),
    lateMax: late[late.length - 1] ?? 0,
    tickCostP50: pct(cost, 0.5),
    tickCostP99: pct(cost, 0.99),
  };
}

/** This worker's heap (after a full GC when the process runs with --expose-gc), for memory benchmarks. */
export function workerMemory(legs: number): { heapUsed: number; external: number; arrayBuffers: number; legs: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, legs };
}

/** Ends the leg's bridge, on both sides when its peer is a leg bridged back to it. */
export function unbridgePair(leg: Leg): void {
  const peer = leg.feed;
  leg.feed = null;
  if (peer instanceof Leg && peer.feed === leg) peer.feed = null;
}
