/**
 * Plain G.711 legs served in C (native/rtp_legs.c) instead of by Leg.receivePhase/sendPhase: two legs
 * bridged to each other with nothing else to do (no prompt, recorder, fork, analysis, mute, echo, echo
 * cancellation, conference, capture, queued digit; G.711 at 20 ms both ways; no in-band DTMF detection
 * unless the far end has sent a telephone-event, when the JS leg stops it too). The engine's end-of-tick
 * flush serves all of them in C, in the same system call that sends the tick's packets: no JS per leg.
 * An Opus↔Opus pair that forwards each other's packets (Leg.passTarget both ways, opus-pass.ts) is served
 * in C too: each packet goes on to the peer's far end as the ring hands it over (`Leg.cLeg`).
 *
 * A pair moves to C at a slot-0 tick where both are plain (`review`) with its whole state (sequence
 * number, timestamp, SSRC, latched address, receive statistics, jitter buffer contents, telephone-event
 * receiver), and back to JS (`release`) before any operation on either leg, so the operation and every
 * later tick run on the JS leg as before; the stream goes on without a gap or a sequence jump either way.
 * Digits and RTCP report times come back in the flush's events arena. Only on 'uring' (the legs live on
 * the ring); on the other socket kinds, or without rtp_uring.node, every leg stays in JS.
 */
import { G711_TABLES } from '../../core/audio/g711';
import { rtpUring } from '../native';
import { LEG_EVENT_DTMF, LEG_EVENT_META, LEG_EVENT_RTCP, LEG_STATE_SAMPLES, LEG_STATE_SIZE, LS } from '../native/leg-layout';
import { Leg } from './leg';
import type { RtpSession } from './rtp-session';
import { cLegsEnabled, TIME_ORIGIN } from './rtp-transport';
import { uringRing, type UringIo } from './rtp-uring';

export class CLegs {
  /** the legs in C, by their ring socket */
  private readonly byFd = new Map<number, Leg>();
  private readonly state = new Float64Array(LEG_STATE_SIZE);
  private readonly samples = new Int16Array(LEG_STATE_SAMPLES);
  /** a leg's latched source as legSource reads it */
  private readonly src = new Float64Array(3);
  /** slot-0 frames skipped by a stall since the last C tick */
  private skipped = 0;
  /** whole states read back from C by sync (stats, the receive watch): counted, as one per packet would cost a leg's copy each */
  syncs = 0;
  /** the tick index the C legs were last served in */
  private lastTick = -Infinity;

  private constructor(
    private readonly ring: UringIo,
    private readonly events: Float64Array,
    /** the engine's slot-0 list: the legs JS serves with the conferences and links */
    private readonly slot0: Leg[],
  ) {}

  /** The C legs of this thread, or null where they do not run (another socket kind, not built, turned off). */
  static start(slot0: Leg[]): CLegs | null {
    const ring = uringRing();
    if (!ring || !rtpUring || !cLegsEnabled()) return null;
    const t = G711_TABLES;
    return new CLegs(ring, rtpUring.legsInit(t.muDecode, t.aDecode, t.muEncode, t.aEncode, TIME_ORIGIN), slot0);
  }

  get size(): number {
    return this.byFd.size;
  }

  has(leg: Leg): boolean {
    return this.byFd.get(leg.session.ringFd) === leg;
  }

  /**
   * Moves every pair of plain legs bridged to each other among the slot-0 legs to C (a slot-0 tick, before
   * the legs are served). Not while a stall's skip waits for the C legs: a JS leg has had its own already.
   */
  review(): void {
    if (this.skipped > 0) return;
    const legs = this.slot0;
    for (let i = legs.length - 1; i >= 0; i--) {
      const a = legs[i];
      const b = a.feed;
      const kind = a.cLeg;
      if (!(b instanceof Leg) || b.feed !== a || kind === null || b.cLeg !== kind) continue;
      if (!this.attach(a, b)) continue;
      if (!this.attach(b, a)) {
        this.detach(a);
        continue;
      }
      legs.splice(legs.indexOf(b), 1);
      legs.splice(legs.indexOf(a), 1);
      i = Math.min(i, legs.length);
    }
  }

  private attach(leg: Leg, peer: Leg): boolean {
    leg.session.saveTo(this.state, this.samples, peer.session);
    try {
      this.ring.io.attachLeg(leg.session.ringFd, peer.session.ringFd, this.state, this.samples);
    } catch (e) {
      process.emitWarning(`media leg ${leg.id} stays in JS: ${(e as Error).message}`);
      return false;
    }
    this.byFd.set(leg.session.ringFd, leg);
    // RTCP stays in JS: checked against the source C latched (strict RTP), read from C as each packet comes: those three
    // numbers only, so a flood of foreign RTCP costs no copy of the state (the whole state comes back at the leg's reports)
    leg.session.sourceFromC = () => this.followSource(leg);
    return true;
  }

  private detach(leg: Leg): void {
    const fd = leg.session.ringFd;
    this.byFd.delete(fd);
    leg.session.sourceFromC = null;
    if (!this.ring.io.detachLeg(fd, this.state, this.samples)) return;
    leg.session.loadFrom(this.state, this.samples, this.peerOf(leg));
    // a stall's skip C has not applied yet goes with the leg (not to a forwarding Opus leg: its stream follows
    // the packets it sends on, whose own timestamps carry the stall, as in C)
    if (leg.session.wide === null) leg.session.skip(this.skipped);
    // digits C took in since its last tick (handed out at its next one, which this leg will not have)
    const v = this.state;
    for (let k = 0; k < v[LS.EV_PEND_N]; k++) leg.session.dtmfIn.detected(v[LS.EV_PEND + 3 * k], v[LS.EV_PEND + 3 * k + 1], v[LS.EV_PEND + 3 * k + 2]);
  }

  /** The session whose packets the leg sends on (its bridge peer), or null. */
  private peerOf(leg: Leg): RtpSession | null {
    return leg.feed instanceof Leg ? leg.feed.session : null;
  }

  /** Brings the leg and its peer back to JS (before any operation on either): served by JS from the next slot-0 tick. */
  release(leg: Leg): Leg {
    if (!this.has(leg)) return leg;
    const peer = leg.feed;
    for (const l of peer instanceof Leg && this.has(peer) ? [leg, peer] : [leg]) {
      this.detach(l);
      this.toJs(l);
    }
    return leg;
  }

  private toJs(l: Leg): void {
    // served in C at lastTick: JS serves it next a whole period later, never twice in one
    l.lastTick = this.lastTick;
    if (!this.slot0.includes(l)) this.slot0.push(l);
  }

  private followSource(leg: Leg): void {
    const s = this.src;
    if (this.ring.io.legSource(leg.session.ringFd, s)) leg.session.source.follow(s[0] !== 0, s[1] | 0, s[2]);
  }

  /** Brings the leg's counters and statistics up to date in JS without moving it (stats, RTCP). */
  sync(leg: Leg): void {
    if (!this.has(leg) || !this.ring.io.readLeg(leg.session.ringFd, this.state, this.samples)) return;
    this.syncs++;
    leg.session.loadFrom(this.state, this.samples, this.peerOf(leg));
  }

  /** Frames of slot 0 a stall skipped: the C legs' RTP clocks move on by as many at their next tick. */
  skip(frames: number): void {
    if (this.byFd.size > 0) this.skipped += frames;
  }

  /** The tick's end: a slot-0 tick serves the C legs in the ring's flush, then hands out their digits and RTCP reports. */
  endTick(slot0: boolean, now: number, index: number): void {
    if (this.byFd.size === 0) this.skipped = 0; // the last left for JS with it
    if (!slot0 || this.byFd.size === 0) return this.ring.endTick();
    const skip = this.skipped;
    this.skipped = 0;
    this.lastTick = index;
    this.ring.endTick(now, skip);
    const ev = this.events;
    for (let i = 0, n = ev[0]; i < n; i++) {
      const m = 1 + i * LEG_EVENT_META;
      const leg = this.byFd.get(ev[m + 1]);
      if (!leg) continue;
      if (ev[m] === LEG_EVENT_DTMF) {
        leg.session.remoteSsrc = ev[m + 4] < 0 ? null : ev[m + 4];
        leg.session.dtmfIn.detected(ev[m + 2], ev[m + 3], ev[m + 5]);
      } else if (ev[m] === LEG_EVENT_RTCP && leg.feed instanceof Leg) {
        // the report moves the statistics' interval on: built in JS from the whole state, which goes back to C
        this.detach(leg);
        leg.session.sendRtcp(now);
        if (!this.attach(leg, leg.feed)) {
          this.release(leg.feed);
          this.toJs(leg);
        }
      }
    }
  }
}
