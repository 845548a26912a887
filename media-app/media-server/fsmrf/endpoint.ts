/**
 * One call leg's media on a switch driven through drachtio-fsmrf (unmodified): the CallEndpoint
 * interface (../endpoint.ts) over an fsmrf Endpoint. SDP offer/answer through fsmrf's dialog, play,
 * say (the switch's speak), playCollect (play_and_get_digits), record, bridge (uuid_bridge), mute
 * (uuid_audio), the switch's DTMF events as the leg's 'dtmf', destroy. What needs the embedded engine's
 * own taps is refused with MediaBackendUnsupported naming the backend: never a silent no-op.
 */
import { LegSocket } from './leg-socket';
import { EventEmitter } from 'node:events';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import type {
  AmdRequest,
  AmdResult,
  BeepResult,
  Conference,
  DtmfEvent,
  DtmfForm,
  EndpointEnd,
  EndpointEvents,
  ForkOptions,
  ForkStats,
  PlayCollectOptions,
  PlayCollectResult,
  PlayResult,
  PlaySpec,
  RecordOptions,
  RecordResult,
  Recording,
  TranscribeOptions,
  VadTapOptions,
} from '../../../media-engine';
import type { CallEndpoint, MusicKind, SwitchRtpCounts } from '../endpoint';
import { MediaBackendUnsupported } from '../port';
import { apiBody, eslArg, eslText, replyText } from './esl-arg';
import type { SharedPrompts } from './shared-prompts';
import { withSwitchFiles } from './switch-files';
import { playCollectOn } from './play-collect';
import { LegMusic, NOT_PLAYED, type MusicPort } from './leg-music';
import type { ForkTapServer, FsmrfFork } from './fork-tap';
import { LegTaps } from './leg-taps';
import type { MediaFork } from '../tap';
import { SessionRecordings } from './record-session';
import { switchRtpCounts } from './leg-stats';
import { MemberMutes, type Direction } from './member-mute';
import { PartyVersions } from './reoffer';
import { HoldTimeout } from './hold-timeout';
import { RoomApp } from './room-app';
import { endLeg } from './leg-end';
import { recordOn } from './leg-record';
import { REAL_TIMERS, type LinkTimers } from './switch-link';

/** The TTS engine and voice `say` asks the switch for (speak `<engine>|<voice>|<text>`). */
const DEFAULT_TTS = { engine: 'espeak-ng', voice: 'en-us' };

/** A string of the switch's playback_* / record_* variables as a number (0 when absent). */
const num = (v: string | null | undefined): number => (v ? Number(v) || 0 : 0);

/** DTMF-Source (switch_channel_queue_dtmf's names) as the engine's. */
const DTMF_SOURCE: Record<string, DtmfEvent['source']> = { RTP: 'rfc2833', INBAND_AUDIO: 'inband', INBOUND_SIGNALING: 'info' };

const refuse = (feature: string) => Promise.reject(new MediaBackendUnsupported('fsmrf', feature));

export class FsmrfCallEndpoint extends EventEmitter<EndpointEvents> implements CallEndpoint {
  destroyed = false;
  /** the embedded engine's conferences never hold this leg */
  conference = null;
  /** the channel socket: what is pending when it ends rejects (leg-socket.ts) */
  private readonly socket: LegSocket;
  /** the record_session recordings running (startRecord) */
  private readonly sessions: SessionRecordings;
  /** the leg's own mute, on the channel or on its room's member (member-mute.ts) */
  private readonly mutes: MemberMutes;
  /** the o= versions of the switch's SDPs the party was given, for our re-offers (reoffer.ts) */
  private readonly versions = new PartyVersions();
  /** the channel's media_timeout across holds (hold-timeout.ts) */
  private readonly holdTimeout: HoldTimeout;
  /** the modifies of the leg, one after another (modify) */
  private modifies: Promise<unknown> = Promise.resolve();
  /** whether the switch's conference application runs on the leg: prompts refused meanwhile (room-app.ts) */
  private readonly room: RoomApp;
  /** where the leg's music plays: its own playback, or the hold a switch room lent it while it is a member (leg-music.ts) */
  private readonly music = new LegMusic({
    // in the room with no hold lent (joining) or none any more (left, the application not completed): not played now
    play: (music) => (this.room.refusal() ? Promise.resolve(NOT_PLAYED) : this.play(music)),
    stop: () => this.breakPlayback(),
    end: () => Promise.resolve(),
    refusal: () => this.room.refusal(),
  });
  /** set while a play or say runs: stopPlayback marks it interrupted */
  private playing: { interrupted: boolean } | null = null;

  /** the leg's forks: its owner's, AMD, the beep and the VAD tap on the engine's classifiers, transcription (leg-taps.ts) */
  private readonly audio = new LegTaps(
    (o) => this.tapOpen(o),
    {
      speech: (e) => void (this.destroyed || this.emit('speech', e)),
      transcript: (t) => this.emit('transcript', t),
      transcriptionError: (e) => this.emit('transcriptionError', e),
    },
    { warn: (o, msg) => this.taps?.log.warn({ ...o, leg: this.fs.uuid }, msg) },
  );

  /**
   * `prompts`: where media-app fetches an http(s) prompt through its egress policy for the switch to
   * play (shared-prompts.ts; none: such prompts are refused); `taps`: the backend's audio fork server
   * (none: forks are refused).
   */
  constructor(
    readonly fs: FsEndpoint,
    private readonly prompts: SharedPrompts | null = null,
    private readonly taps: ForkTapServer | null = null,
    /** the media timeout the leg's INVITE carried (X-Media-Timeout → the switch's media_timeout), 0: none */
    readonly mediaTimeoutMs = 0,
    /** where the leg's end arms its deadline (leg-end.ts): the backend's timers */
    private readonly timers: LinkTimers = REAL_TIMERS,
  ) {
    super();
    this.socket = new LegSocket(fs);
    this.sessions = new SessionRecordings(fs);
    this.mutes = new MemberMutes(fs, (op, f) => this.socket.run(op, f));
    this.holdTimeout = new HoldTimeout(fs, mediaTimeoutMs, (op, f) => this.socket.run(op, f));
    this.room = new RoomApp(fs);
    // the switch's first SDP (its offer on a 3pcc leg) may reach the party as it is
    this.versions.saw(fs.local.sdp);
    this.once('destroy', () => (this.sessions.hangup(), this.mutes.close(), this.room.close()));
    fs.on('dtmf', (e: { dtmf: string; duration?: string; source?: string }) => {
      if (this.destroyed) return;
      // DTMF-Duration is in samples at 8 kHz (FreeSWITCH's unit)
      this.emit('dtmf', { dtmf: e.dtmf, duration: Math.round(num(e.duration) / 8), source: DTMF_SOURCE[e.source ?? ''] ?? 'rfc2833' });
    });
    // the switch ended the channel (its BYE, or the event socket gone): the leg is gone; with
    // MEDIA_TIMEOUT (the receive watch: watchRx) the far end's silence is reported first
    fs.on('destroy', (e?: { reason?: string }) => {
      if (e?.reason === 'MEDIA_TIMEOUT' && !this.destroyed) this.emit('rxTimeout', { silentMs: this.mediaTimeoutMs });
      this.gone({ reason: 'worker-died', message: `the media server ended the channel${e?.reason ? ` (${e.reason})` : ''}` });
    });
  }

  get id(): string {
    return this.fs.uuid;
  }

  get uuid(): string {
    return this.fs.uuid;
  }

  /** our side's SDP (the switch's answer or offer) and where its RTP is */
  get local(): { sdp: string; address: string; port: number } {
    return { sdp: this.fs.local.sdp ?? '', address: this.fs.local.mediaIp ?? '', port: num(this.fs.local.mediaPort) };
  }

  /** the far end's SDP; the negotiation itself is the switch's (not parsed here) */
  get remote(): { sdp: string | null; media: null } {
    return { sdp: this.fs.remote.sdp ?? null, media: null };
  }

  /** whether the switch's SDP offers RFC 4733 telephone-events */
  get telephoneEvent(): boolean {
    return /telephone-event/i.test(this.fs.local.sdp ?? '');
  }

  /**
   * The far end's SDP (an answer to the switch's offer or to our re-offer, a re-INVITE's offer): fsmrf's
   * modify, a re-INVITE to the switch with it; resolves with the switch's SDP (answered by the switch
   * per RFC 3264: recvonly gets sendonly, inactive inactive). The channel's media_timeout is set for a
   * held or resumed party first (hold-timeout.ts). One at a time per leg, in the order asked: the
   * media_timeout, the re-INVITE to the switch and its answer of one never interleave with another's, so
   * the switch ends with the last SDP and its media_timeout.
   */
  modify(remoteSdp: string): Promise<string> {
    const next = this.modifies.then(async () => {
      await this.holdTimeout.before(remoteSdp);
      await this.socket.run('modify', () => this.fs.modify(remoteSdp));
      const sdp = this.local.sdp;
      this.versions.saw(sdp);
      return sdp;
    });
    this.modifies = next.catch(() => undefined);
    return next;
  }

  /**
   * A re-offer of ours (a hold's re-INVITE to the party, an offer in our 200 to a re-INVITE without
   * SDP): the switch's SDP as it stands, its o= version past every one the party was given (reoffer.ts).
   * The party's answer goes to the switch through modify(). The codecs are those the switch negotiated:
   * fsmrf cannot ask the switch for a fresh offer of all it supports.
   */
  async offer(): Promise<string> {
    if (this.destroyed) throw new Error('endpoint is destroyed');
    return this.versions.reoffer(this.fs.local.sdp);
  }

  async play(fileOrUrls: PlaySpec | PlaySpec[], opts: { bargeIn?: boolean } = {}): Promise<PlayResult> {
    const specs = Array.isArray(fileOrUrls) ? fileOrUrls : [fileOrUrls];
    const given = specs.map((s) => (typeof s === 'string' ? eslArg('play file', s) : eslArg('play file', s.file)));
    const first = specs[0];
    const seek = specs.length === 1 && first !== undefined && typeof first !== 'string' ? first.seekSamples : 0;
    this.assertPromptable(); // before fetching anything
    // an http(s) prompt fetched by media-app (switch-files.ts), released when the play settles
    return withSwitchFiles(this.prompts, 'play', [given], async ([files]) => {
      // decided in the same step as the send (no await from here to the channel socket): room-app.ts
      this.assertPromptable();
      return this.playing_(opts.bargeIn, async () => {
        const r = await this.socket.run('play', () => this.fs.play(seek > 0 ? { file: files![0]!, seekOffset: seek } : files!.length === 1 ? files![0]! : files!));
        return { playbackSeconds: num(r.playbackSeconds), playbackMilliseconds: num(r.playbackMilliseconds), playbackLastOffsetPos: num(r.playbackLastOffsetPos) };
      });
    });
  }

  /** Text to speech through the switch's `speak` (its TTS engine and voice; ours when the switch is esl/). */
  async say(text: string, opts: { language?: string; voice?: string; provider?: string; bargeIn?: boolean } = {}): Promise<PlayResult> {
    const speak = {
      ttsEngine: eslArg('say provider', opts.provider ?? DEFAULT_TTS.engine, { pipe: true }),
      voice: eslArg('say voice', opts.voice ?? opts.language?.toLowerCase() ?? DEFAULT_TTS.voice, { pipe: true }),
      text: eslText('say text', text),
    };
    this.assertPromptable();
    return this.playing_(opts.bargeIn, async () => {
      const started = Date.now();
      await this.socket.run('say', () => this.fs.speak(speak));
      // speak reports no playback_* variables: the time it took is what was spoken
      const ms = Date.now() - started;
      return { playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: 0 };
    });
  }

  /** Why a prompt sent to the leg now would not be played (the switch's conference application runs on it: room-app.ts), or null. */
  promptRefusal(): MediaBackendUnsupported | null {
    return this.room.refusal();
  }

  /** The music is over for good: its port's end (a room's hold of the member: `unhold`, member-hold.ts). */
  async endMusic(): Promise<void> {
    if (!this.destroyed) await this.music.port.end();
  }

  /** Why music (a hold's, music on hold) would not be played now: its port's answer (the room's: never; the leg's own: while in a room). */
  holdMusicRefusal(): MediaBackendUnsupported | null {
    return this.music.port.refusal();
  }

  /** The music of a hold or music on hold, once: through its port (the room's while the leg is a member, as `kind` says; else the leg's own play). */
  playMusic(music: string, kind: MusicKind = 'hold'): Promise<PlayResult> {
    return this.music.port.play(music, kind);
  }

  /** A switch room (FsmrfMix) plays the leg's music through `port` while the leg is its member (leg-music.ts). */
  lendMusic(room: object, port: MusicPort): void {
    this.music.lend(room, port);
  }

  /** `room` takes back the port it lent: the leg's own music again (another room's port stays). */
  takeMusicBack(room: object): void {
    this.music.takeBack(room);
  }

  private assertPromptable(): void {
    const refused = this.room.refusal();
    if (refused) throw refused;
  }

  /** Runs a prompt; `bargeIn`: the far end's first digit stops it. `interrupted` when stopPlayback ended it. */
  private async playing_(bargeIn: boolean | undefined, run: () => Promise<Omit<PlayResult, 'interrupted'>>): Promise<PlayResult> {
    const mark = { interrupted: false };
    this.playing = mark;
    const onDigit = () => void this.stopPlayback().catch(() => undefined);
    if (bargeIn) this.once('dtmf', onDigit);
    try {
      return { ...(await run()), interrupted: mark.interrupted };
    } finally {
      this.off('dtmf', onDigit);
      if (this.playing === mark) this.playing = null;
    }
  }

  /**
   * What plays on the leg stops, through its music port: the leg's own, uuid_break (its play resolves,
   * interrupted); a room's hold of the member (all a room member plays), its music, the member still held
   * (endMusic ends the hold).
   */
  async stopPlayback(): Promise<void> {
    if (this.destroyed) return;
    await this.music.port.stop();
  }

  /** uuid_break: what plays on the leg's channel stops (its play resolves, interrupted). */
  private async breakPlayback(): Promise<void> {
    if (this.playing) this.playing.interrupted = true;
    await this.socket.run('stopPlayback', () => this.fs.api('uuid_break', this.fs.uuid));
  }

  /** play_and_get_digits (play-collect.ts): its files (an http(s) one fetched by media-app, as play's), a `say` prompt refused (the switch takes a file). */
  playCollect(opts: PlayCollectOptions): Promise<PlayCollectResult> {
    return playCollectOn({ fs: this.fs, prompts: this.prompts, run: (op, f) => this.socket.run(op, f), assertPromptable: () => this.assertPromptable() }, opts);
  }

  /** A digit its owner received in signalling (SIP INFO): the leg's own 'dtmf', as the engine delivers it. */
  injectDtmf(digit: string, durationMs: number): Promise<void> {
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    this.emit('dtmf', { dtmf: digit, duration: durationMs, source: 'info' });
    return Promise.resolve();
  }

  /** The switch's `record` app (leg-record.ts): what the far end sends, until a limit, a key or stopRecord. */
  record(path: string, opts: RecordOptions = {}): Promise<RecordResult> {
    return recordOn(this.fs, (op, f) => this.socket.run(op, f), path, opts);
  }

  bridge(other: CallEndpoint): Promise<void> {
    if (!(other instanceof FsmrfCallEndpoint)) return refuse('a bridge to a leg of another media server');
    return this.socket.run('bridge', () => this.fs.bridge(other.fs));
  }

  unbridge(): Promise<void> {
    return this.socket.run('unbridge', () => this.fs.unbridge());
  }

  /** uuid_audio (at once, even while a file plays), or the room's member operation while the leg is in a switch room (member-mute.ts). */
  mute(direction: Direction = 'both'): Promise<void> {
    return this.mutes.set(direction, true);
  }

  unmute(direction: Direction = 'both'): Promise<void> {
    return this.mutes.set(direction, false);
  }

  /** The call wants to hear nothing (its own `out` mute): a member hold's end leaves the member deaf then (member-hold.ts). */
  deafWanted(): boolean {
    return this.mutes.wants('out');
  }

  // What the switch is not asked for here, or what needs the embedded engine's own taps: refused, by name.
  /**
   * The receive watch as the switch's own: FreeSWITCH reads `media_timeout` only when it activates the
   * leg's RTP (switch_core_media.c check_media_timeout_params: the answer, a re-INVITE), so the leg is
   * armed at its making (the backend's mediaTimeoutMs on the INVITE) and cannot be armed, changed or
   * disarmed later. watchRx of that timeout (or 0 on a leg made with none) resolves; any other is refused
   * (MediaBackendUnsupported: media-app logs and counts it as unarmed). The switch hangs a silent channel
   * up with MEDIA_TIMEOUT and the leg reports 'rxTimeout' (silentMs: the timeout: the switch gives no
   * measure) before 'destroy'.
   */
  async watchRx(timeoutMs: number): Promise<void> {
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new Error(`watchRx: invalid timeout: ${timeoutMs}`);
    if (this.destroyed) throw new Error('endpoint is destroyed');
    if (timeoutMs === this.mediaTimeoutMs) return;
    const made = this.mediaTimeoutMs > 0 ? `made with ${this.mediaTimeoutMs} ms` : 'made with none';
    throw new MediaBackendUnsupported('fsmrf', `a media timeout of ${timeoutMs} ms after the leg's RTP started (the switch reads media_timeout only when it activates RTP; this leg was ${made})`);
  }
  /**
   * uuid_send_dtmf `<uuid> <digits>@<ms>`: the switch sends them to the far end (RFC 2833 where it
   * negotiated telephone-event). Tones in the audio (`inband`) are refused: the switch picks the form.
   */
  async sendDtmf(digits: string, durationMs = 100, form: DtmfForm = 'rfc4733'): Promise<void> {
    if (form !== 'rfc4733') throw new MediaBackendUnsupported('fsmrf', 'sending DTMF as in-band tones');
    if (!/^[0-9A-Da-d*#]+$/.test(digits)) throw new Error(`sendDtmf: invalid DTMF digits: ${JSON.stringify(digits.slice(0, 40))}`);
    if (!Number.isFinite(durationMs) || durationMs <= 0) throw new Error(`sendDtmf: invalid DTMF duration: ${durationMs}`);
    if (this.destroyed) throw new Error('endpoint is destroyed');
    const res = await this.socket.run('sendDtmf', () => this.fs.api('uuid_send_dtmf', `${this.fs.uuid} ${digits}@${Math.round(durationMs)}`));
    const body = apiBody(res);
    if (!body.startsWith('+OK')) throw new Error(`uuid_send_dtmf: ${replyText(body)}`);
  }
  /** record_session (record-session.ts): resolves once the switch armed it; `done` with its RECORD_STOP. */
  startRecord(path: string, opts: RecordOptions = {}): Promise<Recording> {
    if (opts.separate) return refuse('recording each direction to its own file');
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    return this.socket.run('startRecord', () => this.sessions.start(eslArg('record file', path), opts));
  }
  /**
   * Ends a record_session recording (`path`, or every one: stop_record_session), else what record()
   * records (uuid_break stops the record app, which then reports its file).
   */
  async stopRecord(path?: string): Promise<void> {
    if (this.destroyed) return;
    if (this.sessions.size) return this.socket.run('stopRecord', () => this.sessions.stop(path === undefined ? undefined : eslArg('record file', path)));
    await this.socket.run('stopRecord', () => this.fs.api('uuid_break', this.fs.uuid));
  }
  /**
   * Enters the switch's conference `{ switchRoom }` (a room of fsmrf/conference.ts): fsmrf's
   * Endpoint.join, resolved at the member's add-member; `mute` as it enters (`in`: mute, `out`: deaf).
   * The embedded engine's Conference is refused: its mix runs in another process than this leg.
   */
  async joinConference(conf: Conference | { switchRoom: string }, opts: { mute?: Direction } = {}): Promise<{ memberId: string; confUuid: string }> {
    if (!('switchRoom' in conf)) return refuse("the embedded engine's conference mix");
    const name = eslArg('conference name', conf.switchRoom);
    const flags = { mute: opts.mute === 'in' || opts.mute === 'both', deaf: opts.mute === 'out' || opts.mute === 'both' };
    // in the room from the moment the application is asked for: a prompt after this is refused (room-app.ts)
    const r = await this.room.join(() => this.socket.run('joinConference', () => this.fs.join(name, { flags })));
    this.mutes.joined(name, String(r.memberId));
    return { memberId: String(r.memberId), confUuid: r.confUuid };
  }
  /** Out of the switch's conference it joined (`conference <name> kick <member>`): the channel goes on. */
  async leaveConference(): Promise<void> {
    if (this.destroyed || !this.fs.conf.memberId) return;
    await this.socket.run('leaveConference', () => this.fs.confKick());
  }
  echo(): Promise<void> {
    return refuse('echo (the far end hearing itself)');
  }
  echoCancel(): Promise<void> {
    return refuse('echo cancellation');
  }
  /** The switch's mod_audio_fork of the leg, over the backend's fork server (fork-tap.ts). */
  forkAudioStart(opts: ForkOptions): Promise<MediaFork> {
    return this.audio.forkStart(opts);
  }
  /** Stops `fork`, or every fork of the leg; the last one's counters. */
  forkAudioStop(fork?: MediaFork): Promise<ForkStats | null> {
    return this.audio.forkStop(fork);
  }
  /** app_amd's verdict on what the caller says: the engine's classifier on the leg's fork (amd-tap.ts). */
  amd(opts?: AmdRequest): Promise<AmdResult> {
    return this.audio.amd(opts);
  }
  /** Cancels a running amd() and waitForBeep() (they reject with ECANCELED). */
  stopAmd(): Promise<void> {
    return this.audio.stopAmd();
  }
  /** The voicemail beep: the engine's detector on the leg's fork; rejects with code ETIMEDOUT after timeoutMs. */
  waitForBeep(opts: { timeoutMs?: number } = {}): Promise<BeepResult> {
    return this.audio.waitForBeep(opts.timeoutMs ?? 20000);
  }
  /** Live transcription: the engine's recognisers on forks of the leg (leg-taps.ts). */
  transcribeStart(opts: TranscribeOptions = {}): Promise<void> {
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    return this.audio.transcribeStart(opts);
  }
  transcribeStop(): Promise<void> {
    return this.audio.transcribeStop();
  }
  /** The VAD tap: the engine's VAD and turns on a fork of the leg (amd-tap.ts), its turns as 'speech' events. */
  vadStart(opts: VadTapOptions = {}): Promise<void> {
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    return this.audio.vadStart(opts);
  }
  vadStop(): Promise<void> {
    return this.audio.vadStop();
  }
  /**
   * The switch's RTP counts and inbound quality of the leg (leg-stats.ts): uuid_set_media_stats, then
   * uuid_dump's rtp_audio_* variables. Only what the switch reports (SwitchRtpCounts): no jitter buffer,
   * receive jitter or RTCP figures, which it has no source for.
   */
  async getStats(): Promise<SwitchRtpCounts> {
    if (this.destroyed) throw new Error('endpoint is destroyed');
    const set = apiBody(await this.socket.run('getStats', () => this.fs.api('uuid_set_media_stats', this.fs.uuid)));
    if (!set.startsWith('+OK')) throw new Error(`uuid_set_media_stats: ${replyText(set)}`);
    return switchRtpCounts(apiBody(await this.socket.run('getStats', () => this.fs.api('uuid_dump', `${this.fs.uuid} json`))));
  }
  captureRtp(): Promise<void> {
    return refuse('RTP capture');
  }
  takeRtpCapture(): Promise<null> {
    return refuse('RTP capture');
  }

  /** Hangs the channel up on the switch; 'destroy' once; settles within leg-end.ts's bound even when the switch's BYE never comes. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.gone({ reason: 'destroyed' });
    await endLeg(this.fs, this.timers);
  }

  /**
   * The switch's event socket was lost (backend.ts): the leg ends now, its channel hung up if it still can
   * be, within leg-end.ts's bound (a switch that answers nothing on the leg's socket: its dialog forgotten).
   */
  serverLost(message: string): void {
    if (this.destroyed) return;
    this.gone({ reason: 'worker-died', message });
    void endLeg(this.fs, this.timers);
  }

  /** A fork of the leg over the backend's fork server (fork-tap.ts). */
  private tapOpen(opts: ForkOptions): Promise<FsmrfFork> {
    if (!this.taps) return Promise.reject(new MediaBackendUnsupported('fsmrf', 'audio taps (no audio fork server given to the backend)'));
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    return this.taps.open({ fs: this.fs, run: (op, f) => this.socket.run(op, f) }, opts);
  }

  private gone(end: EndpointEnd): void {
    if (this.destroyed) return;
    this.destroyed = true;
    // a hangup still gives the last segments ('transcript' after 'destroy'), as on the engine
    this.audio.close();
    this.emit('destroy', end);
  }
}
