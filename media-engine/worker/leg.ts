/**
 * One endpoint inside a worker: its RTP session plus what it plays, records, hears (bridge peer,
 * conference mix, echo, injected fork audio) and detects (RFC 4733 and in-band DTMF).
 * The engine calls receivePhase() for every leg, mixes conferences, then sendPhase() for every leg.
 *
 * Rates: everything but the RTP session works on 20 ms frames at 8 kHz (`rawIn`, 8 kHz prompts,
 * mixer, recorders, detectors). A wideband leg (G.722, Opus: 16 kHz, leg-wide.ts) also keeps its 16 kHz
 * frame: a bridge between two wideband legs and the echo pass it on at 16 kHz, a conference mixing at
 * 16 kHz takes it and gives back a 16 kHz mix (`mixOutWide`), a wideband prompt or TTS fills it, fork
 * injection is mixed into it at 16 kHz, and the 8 kHz frames are converted from and to it with the
 * speexdsp resampler.
 */
import { DtmfDetector } from '../dsp/dtmf-detector';
import { ForkTap } from '../fork';
import { Player } from '../player';
import type { Recorder } from '../recorder';
import { applyAnswer, createAnswer, createOffer, SdpError, type AudioCodecName, type Direction, type NegotiatedMedia } from '../sdp/sdp';
import type { MixMember } from './mixer';
import { LegAnalysis } from './leg-analysis';
import type { LegEvent } from './protocol';
import { RtpSession } from './rtp-session';
import { WideFrames } from './leg-wide';
import { LegEchoCanceller, type EchoCancelOptions } from './leg-aec';
import { EarlyIn } from './leg-early';
import type { RxWatch } from './rx-watch';

const FRAME = 160;

export interface LegOptions {
  /** address written into SDP */
  address: string;
  /** address the sockets bind to (default: `address`) */
  bindAddress?: string;
  port: number;
  remoteSdp?: string;
  codecs?: AudioCodecName[];
  direction?: Direction;
  /** Goertzel detection of DTMF tones in the audio (default true) */
  inbandDtmf?: boolean;
}

export interface DtmfEvent {
  dtmf: string;
  /** ms (0 for in-band: the detector reports the key, not its length) */
  duration: number;
  /** rfc2833: telephone-event packets; inband: tones in the audio; info: a SIP INFO of the call (media-app) */
  source: 'rfc2833' | 'inband' | 'info';
  ssrc?: number;
}

/** How digits are sent on a leg: RFC 4733 telephone-events or tones mixed into its audio. */
export type DtmfForm = 'rfc4733' | 'inband';

/** What the leg hears from elsewhere this tick: a bridge peer or a conference. */
export interface FrameFeed {
  /** this tick's 8 kHz frame, null for silence */
  current(): Int16Array | null;
  /** this tick's 16 kHz frame when the source is wideband (silence included), else null */
  currentWide?(): Int16Array | null;
}

export class Leg implements MixMember {
  readonly session: RtpSession;
  readonly rawIn = new Int16Array(FRAME);
  private readonly silence = new Int16Array(FRAME);
  private readonly outFrame = new Int16Array(FRAME);
  private readonly bothFrame = new Int16Array(FRAME);
  /** `both` at 16 kHz for forks at the leg's rate, made with the first such fork */
  private bothWide: Int16Array | null = null;
  readonly mixOut = new Int16Array(FRAME);
  /** the conference's 16 kHz N-1 mix, when the room mixes at 16 kHz and this leg is wideband */
  readonly mixOutWide = new Int16Array(FRAME * 2);
  mixedWide = false;
  hasIn = false;
  /** the 16 kHz frames and resamplers, made when the leg first runs a wideband codec */
  private wide: WideFrames | null = null;
  readonly player = new Player();
  /** an array, not a Set: iterating a Set allocates an iterator each tick */
  readonly recorders: Recorder[] = [];
  readonly forks = new Map<string, ForkTap>();
  /** the early ones among them (set by EngineForks when a fork starts or stops; read every tick without iterating the map) */
  earlyForks: ForkTap[] = [];
  /** AMD and beep detection on the caller's audio */
  readonly analysis: LegAnalysis;
  feed: FrameFeed | null = null; // bridge peer
  conferenceId: string | null = null;
  muteIn = false; // conference: others don't hear us
  muteOut = false; // conference: we hear nothing
  heardOnlyBy: string | null = null; // conference: only this member hears us (a whisper)
  notHeardBy: ReadonlySet<string> | null = null; // conference: these members do not hear us (relate)
  private mutedIn = false; // endpoint mute: caller audio replaced by silence everywhere
  private mutedOut = false; // endpoint mute: caller hears nothing
  /** the receive watch (Endpoint.watchRx), null when off */
  rxWatch: RxWatch | null = null;
  echo = false;
  /** echo cancellation of what the leg receives (Endpoint.echoCancel), null when off */
  private aec: LegEchoCanceller | null = null;
  /** frames handed on as received, while an early fork listens (leg-early.ts) */
  private earlyIn: EarlyIn | null = null;
  /** the frame sent last is not yet queued as the canceller's far end (the early reader's; at the next receive or between) */
  private sentPending = true;
  private readonly handEarly = (f: Int16Array | null): void => {
    const rate = this.session.rate;
    const frame = f && !this.mutedIn ? f : rate === 8000 ? this.silence : this.wide!.silence;
    for (const fork of this.forks.values()) if (fork.early && fork.rate === rate) fork.offer(frame);
  };
  /** the engine's phase slot serving this leg, the tick it was last served in, and whether it is due now */
  slot = 0;
  lastTick = -Infinity;
  due = true;
  private readonly detector: DtmfDetector | null;
  private sessionId = String(Date.now());
  private version = 1;
  private offered = false; // we sent an offer and wait for the answer
  localSdp = '';

  constructor(
    readonly id: string,
    private readonly opts: LegOptions,
    readonly emit: (e: LegEvent) => void,
  ) {
    this.analysis = new LegAnalysis((data) => this.emit({ name: 'speech', data }));
    this.session = new RtpSession(opts.bindAddress ?? opts.address, opts.port, (e) =>
      this.onDtmf({ dtmf: e.digit, duration: e.samples / this.session.dtmfIn.ticksPerMs, source: 'rfc2833', ssrc: e.ssrc }),
    );
    this.detector = opts.inbandDtmf === false ? null : new DtmfDetector();
    // Opus↔Opus: a packet goes on to the peer as it arrives, not at the peer's next turn (up to a tick later)
    this.session.passSink = (now) => {
      const peer = this.feed;
      if (peer instanceof Leg && this.passTarget() === peer) peer.session.forwardFrom(this.session, now, true);
    };
  }

  async open(): Promise<{ localSdp: string; media: NegotiatedMedia | null }> {
    await this.session.open();
    if (this.opts.remoteSdp) return this.modify(this.opts.remoteSdp);
    this.localSdp = createOffer(this.local());
    this.offered = true;
    return { localSdp: this.localSdp, media: null };
  }

  private local() {
    return {
      address: this.opts.address,
      port: this.opts.port,
      codecs: this.opts.codecs,
      direction: this.opts.direction,
      sessionId: this.sessionId,
      version: this.version,
    };
  }

  /** Applies a new remote description: the answer to our offer, or a new offer (re-INVITE, hold). */
  modify(remoteSdp: string): { localSdp: string; media: NegotiatedMedia } {
    if (this.offered) {
      const media = applyAnswer(remoteSdp, this.local());
      this.offered = false;
      this.session.setMedia(media);
      return { localSdp: this.localSdp, media };
    }
    if (this.session.media) this.version++;
    const { sdp, media } = createAnswer(remoteSdp, this.local());
    this.localSdp = sdp;
    this.session.setMedia(media);
    return { localSdp: sdp, media };
  }

  /** A new offer of ours on a live leg (an SDP-less re-INVITE asks for one); modify() takes the answer. */
  reoffer(): { localSdp: string } {
    this.version++;
    this.localSdp = createOffer(this.local());
    this.offered = true;
    return { localSdp: this.localSdp };
  }

  /** A digit its owner received in the signalling (SIP INFO): the same path as one in the media. */
  signalledDigit(e: DtmfEvent): void {
    this.onDtmf(e);
  }

  private onDtmf(e: DtmfEvent): void {
    this.emit({ name: 'dtmf', data: e });
    this.player.stop(true);
    for (const r of [...this.recorders]) r.onDtmf(e.dtmf);
  }

  setMute(direction: 'in' | 'out' | 'both', on: boolean): void {
    if (direction !== 'out') this.mutedIn = on;
    if (direction !== 'in') this.mutedOut = on;
  }

  /** Nobody hears this leg (muted in, or a conference member others do not hear): it only listens. */
  get onlyListening(): boolean {
    return this.mutedIn || this.muteIn;
  }

  /** MixMember: what the conference hears from us. */
  input(): Int16Array | null {
    return this.hasIn && !this.mutedIn ? this.rawIn : null;
  }

  /** MixMember: true while the leg runs a 16 kHz codec (G.722, Opus). */
  get wideband(): boolean {
    return this.session.rate === 16000;
  }

  /** MixMember: what the conference hears from us at 16 kHz (only asked while `wideband`). */
  inputWide(): Int16Array | null {
    const w = this.wide;
    return w && w.rate === this.session.rate && this.hasIn && !this.mutedIn ? w.in : null;
  }

  /** What a bridge peer hears from us. */
  current(): Int16Array | null {
    return this.input();
  }

  /** What a wideband bridge peer hears from us at 16 kHz; null when this leg is not wideband now. */
  currentWide(): Int16Array | null {
    const w = this.wide;
    if (!w || this.session.rate !== w.rate) return null;
    return this.hasIn && !this.mutedIn ? w.in : w.silence;
  }

  /** Starts (options) or stops (null) cancelling the echo of what the leg sends out of what it receives. */
  setEchoCancel(opts: EchoCancelOptions | null): void {
    this.aec?.close();
    this.aec = opts ? new LegEchoCanceller(opts, this.session.rate === 8000 ? 8000 : this.session.rate) : null;
  }

  /**
   * Opus↔Opus without transcoding (opus-pass.ts): the bridge peer that sends on this leg's packets as
   * they came this tick, or null when they are decoded. Both legs run Opus, nothing of this leg uses its
   * received audio but the peer (no in-band DTMF detection unless its far end negotiated no
   * telephone-event, no AMD or VAD, recorder, fork, room, echo or mute) and the peer sends nothing else
   * (no prompt, injection, recorder, mute or telephone-event).
   */
  private passTarget(): Leg | null {
    const peer = this.feed;
    if (!(peer instanceof Leg) || peer.feed !== this || this.session.media?.codec !== 'opus' || peer.session.media?.codec !== 'opus') return null;
    const mine =
      (this.detector === null || this.session.media.dtmfPayloadType !== null) &&
      !this.analysis.active &&
      this.recorders.length === 0 &&
      this.forks.size === 0 &&
      this.conferenceId === null &&
      !this.echo &&
      this.aec === null &&
      !this.mutedIn;
    const theirs =
      !peer.player.active && peer.forks.size === 0 && peer.recorders.length === 0 && !peer.echo && peer.aec === null && !peer.mutedOut && peer.conferenceId === null && !peer.session.dtmfOut.busy;
    return mine && theirs ? peer : null;
  }

  /**
   * What a C leg can carry of this leg (c-legs.ts), both of a pair alike: 'g711', nothing but a bridge peer and
   * its G.711 session; 'pass', an Opus pair forwarding each other's packets (passTarget both ways); else null.
   */
  get cLeg(): 'g711' | 'pass' | null {
    const kind = this.session.cLeg;
    if (kind === 'pass') return this.feed instanceof Leg && this.passTarget() === this.feed && this.feed.passTarget() === this ? 'pass' : null;
    // in-band detection runs until the far end sends a telephone-event (receivePhase): a phone that
    // negotiated telephone-event may still send tones, so only then can the leg leave it behind
    const noInband = this.detector === null || this.session.sawTelephoneEvent;
    const alone = this.conferenceId === null && this.recorders.length === 0 && this.forks.size === 0 && !this.player.active && !this.analysis.active;
    return kind === 'g711' && alone && noInband && !this.echo && !this.mutedIn && !this.mutedOut && this.aec === null ? 'g711' : null;
  }

  receivePhase(now: number): void {
    const s = this.session;
    const early = this.earlyReader();
    if (s.rate === 8000) {
      this.queueSent(early);
      this.hasIn = s.receiveFrame(this.rawIn, now);
      if (early) early.receive(s.jitter, this.hasIn, this.rawIn, 8000, this.aec, this.handEarly);
      else if (this.aec) this.aec.cancel(this.hasIn ? this.rawIn : null, this.outFrame, 8000);
    } else {
      s.setPassThrough(this.passTarget() !== null);
      const w = (this.wide ??= new WideFrames(s.rate));
      this.queueSent(early);
      this.hasIn = s.receiveFrame(w.in, now);
      if (early) early.receive(s.jitter, this.hasIn, w.in, w.rate, this.aec, this.handEarly);
      else if (this.aec) this.aec.cancel(this.hasIn ? w.in : null, w.out, w.rate);
      if (this.hasIn) w.down(this.rawIn);
    }
    if (this.hasIn && this.detector && !this.session.sawTelephoneEvent) {
      const d = this.detector.process(this.rawIn);
      if (d) this.onDtmf({ dtmf: d.digit, duration: 0, source: 'inband' });
    }
    if (this.analysis.active) this.analysis.process(this.hasIn ? this.rawIn : this.silence);
  }

  /**
   * Between this leg's ticks (the engine's other phases) while an early fork listens: the frames that
   * came whole since its last tick go to the fork now, not up to a period later (leg-early.ts `between`).
   */
  receiveBetween(): void {
    // (made by the tick: while an early fork listens, or the canceller runs ahead; the engine calls this for legs with an early fork)
    const early = this.earlyIn;
    if (!early) return;
    const s = this.session;
    if (s.rate !== 8000 && !this.wide) return;
    this.queueSent(early);
    early.between(s.jitter, s.rate, this.aec, this.handEarly);
  }

  sendPhase(now: number): void {
    this.sentPending = true;
    const from = this.feed;
    // Opus↔Opus: the peer's packets as they came, nothing encoded
    if (this.session.rate !== 8000 && from instanceof Leg && from.session.passThrough && from.passTarget() === this) return this.session.forwardFrom(from.session, now);
    const out = this.outFrame;
    const w = this.session.rate === 8000 ? null : (this.wide ??= new WideFrames(this.session.rate));
    // a wideband source (prompt, TTS above 8 kHz) fills the leg's 16 kHz frame itself
    const played = this.player.readFrame(out, w && w.rate === 16000 ? w.out : null);
    if (w) {
      const src = this.wideSource(w, played);
      if (src) return this.sendWide(w, src, now);
      // a narrowband frame under audio a fork injects: brought up, so the injection is mixed at 16 kHz
      if (this.injecting()) {
        this.narrowFrame(out, played !== 0);
        return this.sendWide(w, w.up(out), now);
      }
    }
    this.narrowFrame(out, played !== 0);
    // audio injected by fork consumers is mixed on top (at 8 kHz: a 16 kHz injection is brought down)
    if (this.forks.size) for (const fork of this.forks.values()) addInto(out, fork.nextInjectedAt(8000));
    if (this.mutedOut) out.fill(0);
    // 8 kHz audio on a wideband leg: coded from 8 kHz where nothing reads the 16 kHz frame sent, else brought up to it
    if (w && !this.readsSentWide) this.session.sendNarrowFrame(out, w, now);
    else if (w) this.session.sendFrame(w.up(out), now, true);
    else this.session.sendFrame(out, now);
    this.afterSend(out);
  }

  /** What passes straight through at 16 kHz this tick: a 16 kHz prompt, echo, a wideband bridge peer or the 16 kHz mix; else null. */
  private wideSource(w: WideFrames, played: number): Int16Array | null {
    if (played === 16000) return w.out;
    if (played) return null; // an 8 kHz prompt
    if (this.echo) return this.hasIn ? w.in : w.silence;
    if (this.feed) return this.feed.currentWide?.() ?? null;
    return this.conferenceId && this.mixedWide && w.rate === 16000 ? this.mixOutWide : null;
  }

  /** The 8 kHz frame to send when no 16 kHz one is: the prompt (`played`), echo, bridge peer, mix or silence. */
  private narrowFrame(out: Int16Array, played: boolean): void {
    if (played) return;
    if (this.echo) out.set(this.hasIn ? this.rawIn : this.silence);
    else if (this.feed) out.set(this.feed.current() ?? this.silence);
    else if (this.conferenceId) out.set(this.mixOut);
    else out.fill(0);
  }

  /**
   * Sends a 16 kHz frame with what forks inject mixed on top at 16 kHz (an 8 kHz injection brought up
   * by the fork's resampler); recorders and forks of 8 kHz get it at 8 kHz.
   */
  private sendWide(w: WideFrames, src: Int16Array, now: number): void {
    const o = w.out;
    if (src !== o) o.set(src);
    // (G.722 and Opus legs run at 16 kHz, the rate injected audio comes at)
    if (this.forks.size && w.rate === 16000) for (const fork of this.forks.values()) addInto(o, fork.nextInjectedAt(16000));
    if (this.mutedOut) o.fill(0);
    this.session.sendFrame(o, now);
    if (this.recorders.length || this.forks.size) this.afterSend(w.downOut(this.outFrame));
  }

  /** Something reads the 16 kHz frame a wideband leg sent (`wide.out`): the echo canceller, afterSend's recorders and forks. */
  private get readsSentWide(): boolean {
    return this.aec !== null || this.recorders.length !== 0 || this.forks.size !== 0;
  }

  /**
   * Recorders and forks: what the leg heard and sent this tick, at 8 kHz (`out`), and for a recorder or
   * fork of the leg's wideband rate its 16 kHz frames (what was received, and `wide.out`: what was sent).
   */
  private afterSend(out: Int16Array): void {
    const inFrame = this.hasIn && !this.mutedIn ? this.rawIn : null;
    const recs = this.recorders;
    const w = this.wide && this.session.rate === this.wide.rate ? this.wide : null;
    for (let k = 0; k < recs.length; k++) {
      const r = recs[k];
      if (r.rate === 8000) r.write(inFrame, out);
      else if (w && r.rate === w.rate) r.write(inFrame ? w.in : null, w.out);
      else r.writeNarrow(inFrame, out);
      if (r.finished) recs.splice(k--, 1);
    }
    if (this.forks.size) {
      const both = this.bothFrame;
      for (let i = 0; i < FRAME; i++) {
        const s = (inFrame ? inFrame[i] : 0) + out[i];
        both[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
      }
      let bothWide: Int16Array | null = null;
      for (const fork of this.forks.values()) {
        if (fork.early && fork.rate === this.session.rate) continue; // handed its frames as they came
        if (fork.rate === 8000) fork.offer(fork.mix === 'in' ? (inFrame ?? this.silence) : fork.mix === 'out' ? out : both);
        else if (w && fork.rate === w.rate) {
          if (fork.mix === 'in') fork.offer(inFrame ? w.in : w.silence);
          else if (fork.mix === 'out') fork.offer(w.out);
          else fork.offer((bothWide ??= this.mixWide(w, inFrame !== null)));
        } else fork.offerNarrow(fork.mix === 'in' ? (inFrame ?? this.silence) : fork.mix === 'out' ? out : both);
      }
    }
  }

  /**
   * The early reader while an early fork listens, and after, while the canceller runs (the frames it
   * cleaned ahead must not be cleaned again at the playout point); else null, the buffer's floor lifted.
   */
  private earlyReader(): EarlyIn | null {
    if (this.listensEarly() || (this.earlyIn !== null && this.aec !== null)) return (this.earlyIn ??= new EarlyIn(this.session.rate, this.aec !== null));
    if (this.earlyIn) this.session.jitter.floor = null;
    return (this.earlyIn = null);
  }

  /** The frame sent last tick (the canceller's far end), handed to the early reader once, before what came in. */
  private queueSent(early: EarlyIn | null): void {
    if (early && this.aec && this.sentPending) early.sent(this.session.rate === 8000 ? this.outFrame : this.wide!.out, this.session.rate);
    this.sentPending = false;
  }

  /** Ticks the worker could not run: the RTP clock goes on, and the canceller's far end had silence meanwhile. */
  skip(ticks: number): void {
    this.session.skip(ticks);
    if (this.aec) this.earlyIn?.silent(ticks);
  }

  /** True while an early fork listens at the leg's rate (leg-early.ts hands it the frames). */
  private listensEarly(): boolean {
    const forks = this.earlyForks;
    for (let i = 0; i < forks.length; i++) if (forks[i]!.rate === this.session.rate) return true;
    return false;
  }

  /** True while a fork has audio to inject this tick. */
  private injecting(): boolean {
    if (this.forks.size) for (const fork of this.forks.values()) if (fork.hasInjected) return true;
    return false;
  }

  /** What the leg heard and sent this tick at its wideband rate, mixed (for `both` forks). */
  private mixWide(w: WideFrames, heard: boolean): Int16Array {
    const b = (this.bothWide ??= new Int16Array(w.rate / 50));
    const i16 = w.in;
    const o16 = w.out;
    for (let i = 0; i < b.length; i++) {
      const s = (heard ? i16[i] : 0) + o16[i];
      b[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
    }
    return b;
  }

  async close(): Promise<void> {
    this.wide?.close();
    this.aec?.close();
    this.aec = null;
    this.player.stop();
    this.analysis.close('endpoint destroyed', 'EDESTROYED');
    for (const r of this.recorders) r.stop('hangup');
    this.recorders.length = 0;
    await this.session.close();
  }
}

/** `add` (when there is one) mixed into `into`, clipped; the two are the same length. */
function addInto(into: Int16Array, add: Int16Array | null): void {
  if (!add) return;
  for (let i = 0; i < into.length; i++) {
    const s = into[i] + add[i];
    into[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
  }
}

export { SdpError };
