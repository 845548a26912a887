/**
 * A leg's receive watch (Endpoint.watchRx): a leg whose far end has sent neither RTP nor RTCP for
 * `timeoutMs` reports 'rxTimeout' once, on the engine's own clock (the packets' arrival times and
 * performance.now()), and again only after it has heard something and gone quiet anew. Only a leg
 * that expects media is watched: negotiated both ways (not on hold: the far end's sendonly, recvonly or
 * inactive, or our own hold by re-INVITE) and heard by someone (not muted in, nor a conference member
 * that others do not hear: a party only listening). While a leg is not watched its silence does not
 * count: the watch starts over when it is watched again.
 *
 * The engine walks its legs every RX_CHECK_MS (its 20 ms tick pays one compare of the time); a leg served
 * in C (c-legs.ts) has its arrival time read from C only when the JS copy says it is silent.
 */
import type { CLegs } from './c-legs';
import type { Leg } from './leg';

/** How often the engine looks at its legs' receive watches. */
export const RX_CHECK_MS = 250;

export interface RxTimeoutEvent {
  /** ms since the last RTP or RTCP packet from the far end (or since the watch started, if none came) */
  silentMs: number;
}

export class RxWatch {
  /** when silence started to count: the watch armed, or the leg watched again */
  private from: number;
  private fired = false;
  private watched = true;

  constructor(
    readonly timeoutMs: number,
    now = performance.now(),
  ) {
    this.from = now;
  }

  /** ms of silence to report now, or 0. `heard`: the far end's last packet (performance.now() clock, 0: none). */
  check(watched: boolean, heard: number, now: number): number {
    if (!watched) {
      this.watched = false;
      return 0;
    }
    if (!this.watched) {
      this.watched = true;
      this.from = now;
    }
    const silent = now - Math.max(heard, this.from);
    if (silent < this.timeoutMs) {
      this.fired = false;
      return 0;
    }
    if (this.fired) return 0;
    this.fired = true;
    return Math.round(silent);
  }
}

/** Whether the leg expects media from its far end now (see the top of the file). */
function expectsMedia(leg: Leg): boolean {
  const m = leg.session.media;
  return m !== null && m.send && m.receive && !leg.onlyListening;
}

/** The last packet from the leg's far end (RTP from the latched address, or RTCP). */
function lastHeard(leg: Leg): number {
  return Math.max(leg.session.lastFromRemote, leg.session.lastRtcp);
}

/** One look at every watched leg: each that has been silent too long reports 'rxTimeout'. Returns the ms to the next look. */
export function checkRx(legs: Map<string, Leg>, cLegs: CLegs | null): number {
  const now = performance.now();
  for (const leg of legs.values()) {
    const w = leg.rxWatch;
    if (w === null) continue;
    const watched = expectsMedia(leg);
    // a C leg's arrival time reaches JS with its RTCP reports: read from C before calling it silent
    if (watched && cLegs !== null && now - lastHeard(leg) >= w.timeoutMs && cLegs.has(leg)) cLegs.sync(leg);
    const silentMs = w.check(watched, lastHeard(leg), now);
    if (silentMs > 0) leg.emit({ name: 'rxTimeout', data: { silentMs } });
  }
  return RX_CHECK_MS;
}
