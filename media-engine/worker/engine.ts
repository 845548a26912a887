/**
 * Everything one media worker owns: its legs, conferences, links and forks, and the operations the API
 * thread asks for (the closed list METHODS of protocol.ts); the 20 ms clock that serves them and the
 * slot each leg is served in are engine-tick.ts's.
 */
import type { ForkMix } from '../fork';
import { EngineForks } from './engine-forks';
import { Recorder, type RecordOptions, type RecordResult } from '../recorder';
import type { PlayResult, SynthesisReport } from '../player';
import type { TickClock } from './clock';
import { EngineTicks } from './engine-tick';
import { RxWatch } from './rx-watch';
import { legStats, unbridgePair, workerMemory } from './engine-parts';
import { Leg, type DtmfForm, type LegOptions } from './leg';
import type { EchoCancelOptions } from './leg-aec';
import { EngineError } from './engine-error';
import { sendDigits, signalledDigit } from './leg-dtmf';
import { ConferenceMixer } from './mixer';
import type { ConferenceState } from './conference-fork';
import { resolveSource, type SourceSpec } from './source-resolver';
import { FrameLink, RemoteMember } from './link';
import { RtpCapture, type RtpCaptureOptions } from './rtp-capture';
import type { AmdRequest, AmdResult, BeepResult, VadTapOptions } from './leg-analysis';
import type { ConferenceEvent, EventMessage } from './protocol';
import type { MessagePort } from 'node:worker_threads';

/** the most datagrams one leg's capture may keep (each up to 224 bytes of buffer) */
const MAX_CAPTURE_PACKETS = 100_000;

export { EngineError };

export class Engine {
  private readonly legs = new Map<string, Leg>();
  private readonly conferences = new Map<string, ConferenceState>();
  private readonly forks: EngineForks;
  private readonly links = new Map<string, { link: FrameLink; legId?: string; confId?: string; member?: RemoteMember }>();
  private readonly ticks: EngineTicks;

  constructor(
    private readonly emitEvent: (e: EventMessage) => void,
    postFrame: (forkId: string, frame: Int16Array) => void,
    opts: { phases?: number; forkStarted?: (forkId: string, at: number) => void } = {},
  ) {
    this.forks = new EngineForks({ leg: (id) => (this.legs.has(id) ? this.leg(id) : undefined), conference: (id) => this.conferences.get(id) }, postFrame, opts.forkStarted);
    this.ticks = new EngineTicks({ legs: this.legs, conferences: this.conferences, links: this.links, forks: this.forks }, opts.phases);
  }

  /** The clock that serves this worker (engine-tick.ts): its stats, for tests of a stall. */
  get clock(): TickClock {
    return this.ticks.clock;
  }

  private confEvent(confId: string, e: ConferenceEvent): void {
    this.emitEvent({ t: 'event', kind: 'conference', target: confId, ...e });
  }

  /** The leg for an operation: back in JS first if it ran in C (it returns at a later tick if still plain). */
  private leg(id: string): Leg {
    const l = this.peek(id);
    return this.ticks.cLegs ? this.ticks.cLegs.release(l) : l;
  }

  private peek(id: string): Leg {
    const l = this.legs.get(id);
    if (!l) throw new EngineError(`no such endpoint ${id}`, 'ENOENDPOINT');
    return l;
  }

  private conf(id: string): ConferenceState {
    const c = this.conferences.get(id);
    if (!c) throw new EngineError(`no such conference ${id}`, 'ENOCONFERENCE');
    return c;
  }

  // ---- endpoints

  async createLeg(id: string, opts: LegOptions) {
    const leg = new Leg(id, opts, (e) => this.emitEvent({ t: 'event', kind: 'leg', target: id, ...e }));
    const res = await leg.open(); // rejects with EADDRINUSE when the port is taken
    this.legs.set(id, leg);
    this.ticks.placeNew(leg);
    this.ticks.wake();
    return res;
  }

  modifyLeg(id: string, remoteSdp: string) {
    return this.leg(id).modify(remoteSdp);
  }

  offerLeg(id: string) {
    return this.leg(id).reoffer();
  }

  play(id: string, specs: SourceSpec[], opts: { bargeIn?: boolean } = {}): Promise<PlayResult> {
    if (!Array.isArray(specs) || specs.length === 0) throw new EngineError('nothing to play', 'EINVAL');
    const leg = this.leg(id);
    const synthesized: SynthesisReport[] = [];
    const tell = (r: SynthesisReport) => void synthesized.push(r);
    // a wideband leg gets prompts and speech at its rate (the leg's codec when the source loads)
    return leg.player
      .enqueue(
        specs.map((s) => () => resolveSource(s, leg.wideband, tell)),
        !!opts.bargeIn,
      )
      .then((r) => (synthesized.length ? { ...r, synthesized } : r));
  }

  stopPlayback(id: string): void {
    this.leg(id).player.stop();
  }

  /** Digits as RFC 4733 events (the leg's negotiated payload type, its own RTP clock) or as tones in its audio. */
  sendDtmf(id: string, digits: string, durationMs = 100, form: DtmfForm = 'rfc4733', maxWaiting?: number): void {
    sendDigits(this.leg(id), digits, durationMs, form, maxWaiting);
  }

  /** A digit the call received in its signalling (SIP INFO): reported, and it barges in and ends recordings like one in the media. */
  injectDtmf(id: string, digit: string, durationMs: number): void {
    signalledDigit(this.leg(id), digit, durationMs);
  }

  /** Records until a stop condition (resolves then); with `armId` the leg reports 'recordArmed' once the recorder is in place (startRecord). */
  record(id: string, path: string, opts: RecordOptions = {}, armId?: number): Promise<RecordResult> {
    const leg = this.leg(id);
    const r = new Recorder(path, opts, leg.session.rate); // a wideband leg records at its own 16 kHz
    leg.recorders.push(r);
    if (armId !== undefined) leg.emit({ name: 'recordArmed', data: { armId, rate: r.rate } });
    return r.result;
  }

  stopRecord(id: string, path?: string): void {
    const leg = this.leg(id);
    for (const r of leg.recorders) if (!path || r.path === path) r.stop('stopped');
  }

  amd(id: string, req: AmdRequest = {}): Promise<AmdResult> {
    return this.leg(id).analysis.startAmd(req ?? {});
  }

  waitForBeep(id: string, timeoutMs: number): Promise<BeepResult> {
    return this.leg(id).analysis.waitForBeep(timeoutMs);
  }

  stopAmd(id: string): void {
    this.leg(id).analysis.cancel('stopped', 'ECANCELED');
  }

  /** The VAD tap: 'speech' events (start/stop of the caller's turns) instead of frames per tick. */
  vadStart(id: string, opts: VadTapOptions = {}): Promise<void> {
    return this.leg(id).analysis.startVad(opts ?? {});
  }

  vadStop(id: string): void {
    this.leg(id).analysis.stopVad();
  }

  bridge(a: string, b: string): void {
    const la = this.leg(a);
    const lb = this.leg(b);
    if (a === b) throw new EngineError('cannot bridge an endpoint to itself', 'EINVAL');
    this.unbridge(a);
    this.unbridge(b);
    la.feed = lb;
    lb.feed = la;
    this.ticks.place(la, 0);
    this.ticks.place(lb, 0);
  }

  unbridge(a: string): void {
    unbridgePair(this.leg(a));
  }

  mute(id: string, direction: 'in' | 'out' | 'both', on: boolean): void {
    this.leg(id).setMute(direction, on);
  }

  setEcho(id: string, on: boolean): void {
    this.leg(id).echo = on;
  }

  /** Echo cancellation of the leg's received audio: on with its options, or off (null). */
  echoCancel(id: string, opts: EchoCancelOptions | null): void {
    this.leg(id).setEchoCancel(opts);
  }

  /** Arms the leg's receive watch (rx-watch.ts; `held`: in any direction): 'rxTimeout' after `timeoutMs` silent; 0 disarms it. */
  watchRx(id: string, timeoutMs: number, held = false): void {
    this.peek(id).rxWatch = timeoutMs > 0 ? new RxWatch(timeoutMs, performance.now(), held) : null;
  }

  stats(id: string) {
    const leg = this.peek(id);
    this.ticks.cLegs?.sync(leg);
    return legStats(leg);
  }

  /** Starts capturing the leg's RTP and RTCP (rtp-capture.ts); a capture already running goes on. */
  captureRtp(id: string, opts: RtpCaptureOptions): void {
    const session = this.leg(id).session;
    if (session.capture) return;
    if (!Number.isInteger(opts.maxPackets) || opts.maxPackets < 1 || opts.maxPackets > MAX_CAPTURE_PACKETS) throw new Error(`maxPackets must be 1..${MAX_CAPTURE_PACKETS}`);
    session.capture = new RtpCapture(opts);
  }

  /** What the leg's capture holds (core/media/rtp-capture.ts records), null without one; it goes on. */
  takeRtpCapture(id: string): Uint8Array | null {
    return this.leg(id).session.capture?.take() ?? null;
  }

  async destroyLeg(id: string): Promise<void> {
    const leg = this.legs.get(id);
    if (!leg) return;
    this.legs.delete(id);
    this.ticks.cLegs?.release(leg);
    this.ticks.unplace(leg);
    if (leg.feed) unbridgePair(leg);
    if (leg.conferenceId) this.conferences.get(leg.conferenceId)?.mixer.leave(id);
    this.forks.drop(leg.forks);
    await leg.close();
  }

  // ---- links to other workers

  addLink(linkId: string, port: MessagePort): void {
    this.links.set(linkId, { link: new FrameLink(linkId, port) });
    this.ticks.wake();
  }

  private link(linkId: string) {
    const l = this.links.get(linkId);
    if (!l) throw new EngineError(`no such link ${linkId}`, 'ENOLINK');
    return l;
  }

  /** The leg hears the link and sends its own input over it (bridge, or a conference on another worker). */
  linkLeg(legId: string, linkId: string): void {
    const leg = this.leg(legId);
    const l = this.link(linkId);
    if (leg.feed) unbridgePair(leg);
    l.legId = legId;
    // a wideband leg sends its 16 kHz frame (the other side resamples it down if it must)
    l.link.outgoing = () => (leg.wideband ? leg.inputWide() : leg.input());
    leg.feed = l.link;
    this.ticks.place(leg, 0);
  }

  /** A leg on another worker joins a conference here through the link. */
  linkMember(confId: string, linkId: string, memberId: string, opts: { mute?: 'in' | 'out' | 'both' } = {}) {
    const c = this.conf(confId);
    const l = this.link(linkId);
    const m = new RemoteMember(memberId, l.link);
    m.muteIn = opts.mute === 'in' || opts.mute === 'both';
    m.muteOut = opts.mute === 'out' || opts.mute === 'both';
    l.confId = confId;
    l.member = m;
    c.mixer.join(m);
    this.confEvent(confId, { name: 'join', data: { memberId, size: c.mixer.size } });
    return { memberId, size: c.mixer.size };
  }

  unlink(linkId: string): void {
    const l = this.links.get(linkId);
    if (!l) return;
    this.links.delete(linkId);
    const leg = l.legId ? this.legs.get(l.legId) : undefined;
    if (leg && leg.feed === l.link) leg.feed = null;
    if (l.confId && l.member) {
      const c = this.conferences.get(l.confId);
      if (c?.mixer.has(l.member.id)) {
        c.mixer.leave(l.member.id);
        this.confEvent(l.confId, { name: 'leave', data: { memberId: l.member.id, size: c.mixer.size } });
      }
    }
    l.link.close();
  }

  // ---- conferences

  createConference(id: string): void {
    if (this.conferences.has(id)) throw new EngineError(`conference ${id} exists`, 'EEXIST');
    const onTalk = (memberId: string, talking: boolean) => this.confEvent(id, { name: 'speaker', data: { memberId, talking } });
    this.conferences.set(id, { mixer: new ConferenceMixer(id, onTalk), recorder: null, forks: new Map() });
    this.ticks.wake();
  }

  joinConference(confId: string, legId: string, opts: { mute?: 'in' | 'out' | 'both' } = {}): { memberId: string; size: number } {
    const c = this.conf(confId);
    const leg = this.leg(legId);
    if (leg.conferenceId && leg.conferenceId !== confId) this.leaveConference(leg.conferenceId, legId);
    leg.muteIn = opts.mute === 'in' || opts.mute === 'both';
    leg.muteOut = opts.mute === 'out' || opts.mute === 'both';
    leg.heardOnlyBy = leg.notHeardBy = null; // no whisper, heard by all
    leg.conferenceId = confId;
    leg.mixOut.fill(0);
    this.ticks.place(leg, 0);
    c.mixer.join(leg);
    this.confEvent(confId, { name: 'join', data: { memberId: legId, size: c.mixer.size } });
    return { memberId: legId, size: c.mixer.size };
  }

  leaveConference(confId: string, legId: string): void {
    const c = this.conf(confId);
    const leg = this.legs.get(legId);
    if (!c.mixer.has(legId)) return;
    c.mixer.leave(legId);
    if (leg) leg.conferenceId = null;
    this.confEvent(confId, { name: 'leave', data: { memberId: legId, size: c.mixer.size } });
  }

  /** Member `memberId` of `confId` in its mixer: a leg of this worker in it, or a linked leg of another (ENOTMEMBER else). */
  private mixMember(confId: string, memberId: string): Leg | RemoteMember {
    this.conf(confId);
    const m = [...this.links.values()].find((l) => l.confId === confId && l.member?.id === memberId)?.member ?? this.leg(memberId);
    if (m instanceof Leg && m.conferenceId !== confId) throw new EngineError(`${memberId} is not in ${confId}`, 'ENOTMEMBER');
    return m;
  }

  muteMember(confId: string, legId: string, direction: 'in' | 'out' | 'both', on: boolean): void {
    const m = this.mixMember(confId, legId);
    if (direction !== 'out') m.muteIn = on;
    if (direction !== 'in') m.muteOut = on;
  }

  /** Only the member `to` hears the member (a whisper); null: everyone does again. */
  whisperMember(confId: string, memberId: string, to: string | null): void {
    this.mixMember(confId, memberId).heardOnlyBy = to;
  }

  /** The members (ids) that do not hear the member (mod_conference's relate); empty: all do again. */
  relateMember(confId: string, memberId: string, notHeardBy: string[]): void {
    this.mixMember(confId, memberId).notHeardBy = notHeardBy.length ? new Set(notHeardBy) : null;
  }

  recordConference(confId: string, path: string, opts: RecordOptions = {}): Promise<RecordResult> {
    const c = this.conf(confId);
    c.recorder?.stop('stopped');
    // 16 kHz when the room mixes at 16 kHz as the recording starts (a wideband member is in it)
    c.recorder = new Recorder(path, { ...opts, end_of_silence: 0, end_of_key: '' }, c.mixer.widebandNow ? 16000 : 8000);
    return c.recorder.result;
  }

  stopConferenceRecord(confId: string): void {
    const c = this.conf(confId);
    c.recorder?.stop('stopped');
    c.recorder = null;
  }

  conferenceMembers(confId: string): string[] {
    return this.conf(confId).mixer.memberIds();
  }

  destroyConference(confId: string): void {
    const c = this.conferences.get(confId);
    if (!c) return;
    for (const leg of c.mixer.memberIds().map((id) => this.legs.get(id))) if (leg) leg.conferenceId = null;
    c.recorder?.stop('hangup');
    this.forks.drop(c.forks);
    c.mixer.close();
    this.conferences.delete(confId);
    this.confEvent(confId, { name: 'destroy', data: {} });
  }

  // ---- forks (engine-forks.ts)

  /** Starts a fork; resolves with its rate (EngineForks.start). */
  forkStart(ownerId: string, forkId: string, mix: ForkMix = 'both', maxInFlight = 50, legRate = false, early = false, reportStarts = false): number {
    return this.forks.start(ownerId, forkId, mix, maxInFlight, legRate, early, reportStarts);
  }

  forkStop(forkId: string) {
    return this.forks.stop(forkId);
  }

  forkAck(forkId: string, n: number): void {
    this.forks.ack(forkId, n);
  }

  forkClear(forkId: string): void {
    this.forks.clear(forkId);
  }

  inject(forkId: string, samples: Int16Array, rate: 8000 | 16000 = 8000): void {
    const leg = this.forks.inject(forkId, samples, rate);
    if (leg) this.ticks.hurry(leg);
  }

  // ---- worker-wide

  workerStats() {
    return this.ticks.figures();
  }

  /** This worker's heap (after a full GC when the process runs with --expose-gc), for memory benchmarks. */
  memory() {
    return workerMemory(this.legs.size);
  }

  resetStats(): void {
    this.ticks.resetStats();
  }

  async shutdown(): Promise<void> {
    this.clock.stop();
    for (const id of [...this.links.keys()]) this.unlink(id);
    for (const id of [...this.conferences.keys()]) this.destroyConference(id);
    await Promise.all([...this.legs.keys()].map((id) => this.destroyLeg(id)));
  }
}
