/**
 * A leg's receive watch (Endpoint.watchRx): a leg whose far end has sent neither RTP nor RTCP for
 * `timeoutMs` reports 'rxTimeout' once, on the engine's own clock (the packets' arrival times and
 * performance.now()), and again only after it has heard something and gone quiet anew. Only a leg
 * that expects media is watched: negotiated both ways (not on hold: the far end's sendonly, recvonly or
 * inactive, or our own hold by re-INVITE) and heard by someone (not muted in, nor a conference member
 * that others do not hear: a party only listening). A `held` watch (esl/'s media_hold_timeout, a switch's
 * channel whose far end holds) watches the leg whatever its direction while media is negotiated. While a leg is not watched its silence does not
 * count: the watch starts over when it is watched again.
 *
 * What counts is the leg's count of RTP packets received (from any source: also a sender that is not
 * the latched address) and its last RTCP packet. The engine walks its legs every RX_CHECK_MS (its 20 ms
 * tick pays one compare of the time); a leg served in C (c-legs.ts) has its count read from C only when
 * the JS copy says it is silent.
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
  /** the RTP packets the leg had received at the last look, and when that count last moved */
  private packets = -1;
  private heardAt = 0;
  private fired = false;
  private watched = true;

  constructor(
    readonly timeoutMs: number,
    now = performance.now(),
    /** a held leg's watch (a switch's media_hold_timeout): watched while media is negotiated, in any direction */
    readonly held = false,
  ) {
    this.from = now;
  }

  /**
   * ms of silence to report now, or 0. `packets`: the RTP packets received so far (any source port: a
   * sender may not be the latched address, e.g. a raw-socket one); `lastRtp`: the last of them from the
   * latched address, `lastRtcp`: the last RTCP packet (performance.now() clock, 0: none). A count that
   * moved dates the last packet at `lastRtp` when that is newer than the last look, else now.
   */
  check(watched: boolean, packets: number, lastRtp: number, lastRtcp: number, now: number): number {
    if (!watched) {
      this.watched = false;
      return 0;
    }
    if (!this.watched) {
      this.watched = true;
      this.from = now;
    }
    if (packets !== this.packets) {
      this.heardAt = lastRtp > this.heardAt && this.packets >= 0 ? Math.min(lastRtp, now) : now;
      this.packets = packets;
    }
    const silent = now - Math.max(this.heardAt, lastRtcp, this.from);
    if (silent < this.timeoutMs) {
      this.fired = false;
      return 0;
    }
    if (this.fired) return 0;
    this.fired = true;
    return Math.round(silent);
  }

  /** Whether the leg looks silent for the timeout by what JS knows (a C leg's count is then read from C). */
  looksSilent(packets: number, lastRtcp: number, now: number): boolean {
    return packets === this.packets && now - Math.max(this.heardAt, lastRtcp, this.from) >= this.timeoutMs;
  }
}

/** Whether the leg expects media from its far end now (see the top of the file). */
function expectsMedia(leg: Leg): boolean {
  const m = leg.session.media;
  return m !== null && m.send && m.receive && !leg.onlyListening;
}

/** One look at every watched leg: each that has been silent too long reports 'rxTimeout'. Returns the ms to the next look. */
export function checkRx(legs: Map<string, Leg>, cLegs: CLegs | null): number {
  const now = performance.now();
  for (const leg of legs.values()) {
    const w = leg.rxWatch;
    if (w === null) continue;
    const s = leg.session;
    const watched = w.held ? s.media !== null : expectsMedia(leg);
    // a C leg's counters reach JS with its RTCP reports: read from C before calling it silent
    if (watched && cLegs !== null && w.looksSilent(s.stats.received, s.lastRtcp, now) && cLegs.has(leg)) cLegs.sync(leg);
    const silentMs = w.check(watched, s.stats.received, s.lastFromRemote, s.lastRtcp, now);
    if (silentMs > 0) leg.emit({ name: 'rxTimeout', data: { silentMs } });
  }
  return RX_CHECK_MS;
}
