/**
 * Endpoint: one RTP leg on a media worker, shaped like drachtio-fsmrf's Endpoint. Operations return
 * promises; what happens later arrives as events (EndpointEvents: 'dtmf', 'speech', 'transcript',
 * 'destroy' with the reason the endpoint ended).
 */
import { EventEmitter } from 'node:events';
import { AudioFork, type ForkOptions } from './audio-fork';
import { closeLink, openLink, type CrossLink } from './bridge';
import type { Conference } from './conference';
import type { ForkStats } from './fork';
import type { PlayResult } from './player';
import type { RecordOptions, RecordResult } from './recorder';
import type { NegotiatedMedia } from './sdp/sdp';
import type { DtmfEvent, DtmfForm } from './worker/leg';
import type { EchoCancelOptions } from './worker/leg-aec';
import type { AmdRequest, AmdResult, BeepResult, VadTapOptions } from './worker/leg-analysis';
import type { SourceSpec } from './worker/source-resolver';
import { LegTranscription, type TranscribeOptions } from './transcriber';
import type { WorkerHost } from './worker/worker-host';
import type { EndpointEnd, EndpointEvents, EndpointStats, PlayCollectOptions, PlayCollectResult, Recording } from './endpoint-types';

export type { EndpointEnd, EndpointEndReason, EndpointEvents, EndpointStats, PlayCollectOptions, PlayCollectResult, Recording } from './endpoint-types';
import type { LegEventMessage, Method, ParamsAfterTarget, Result } from './worker/protocol';

/** What play() takes: a file, URL or stream name, or a file started `seekSamples` (8 kHz samples) in. */
export type PlaySpec = string | { file: string; seekSamples: number };

/** startRecord()'s ids, unique in the process (a worker reports its recorder armed by it) */
let nextArmId = 1;

export class Endpoint extends EventEmitter<EndpointEvents> {
  readonly local: { sdp: string; address: string; port: number };
  readonly remote: { sdp: string | null; media: NegotiatedMedia | null };
  destroyed = false;
  conference: Conference | null = null;
  private readonly forks = new Set<AudioFork>();
  /** set while bridged to, or conferenced on, another worker */
  private crossLink: CrossLink | null = null;
  private bridgedTo: Endpoint | null = null;
  /** live transcription: forks of its own, not in this.forks (forkAudioStop() must not end it) */
  private readonly transcription = new LegTranscription((o) => new AudioFork(this.host, this.uuid, o).start(), {
    transcript: (x) => this.emit('transcript', x),
    error: (e) => this.emit('transcriptionError', e),
  });
  /** startRecord()s waiting for their recorder's 'recordArmed', by arm id */
  private readonly arming = new Map<number, (rate: number) => void>();

  constructor(
    readonly uuid: string,
    readonly host: WorkerHost,
    localSdp: string,
    address: string,
    port: number,
    remoteSdp: string | null,
    media: NegotiatedMedia | null,
    private readonly onDestroy: (ep: Endpoint) => Promise<void>,
  ) {
    super();
    this.local = { sdp: localSdp, address, port };
    this.remote = { sdp: remoteSdp, media };
  }

  get id(): string {
    return this.uuid;
  }

  /** An operation on this endpoint's leg (its uuid first, then the operation's own parameters). */
  private call<M extends Method>(method: M, ...args: ParamsAfterTarget<M>): Promise<Result<M>> {
    if (this.destroyed) return Promise.reject(new Error('endpoint is destroyed'));
    return this.host.callOn(method, this.uuid, ...args);
  }

  /** Applies the far end's SDP (the answer to our offer, a re-INVITE, hold/unhold); resolves with our SDP. */
  async modify(remoteSdp: string): Promise<string> {
    const r = await this.call('modifyLeg', remoteSdp);
    this.local.sdp = r.localSdp;
    this.remote.sdp = remoteSdp;
    this.remote.media = r.media;
    return r.localSdp;
  }

  /**
   * Arms the receive watch (worker/rx-watch.ts): 'rxTimeout' once the far end has sent no RTP or RTCP
   * for `timeoutMs` while the leg expects media (both ways, heard by someone); 0 disarms it. `held`: the
   * watch of a leg its far end holds (esl/'s media_hold_timeout), watched whatever the media's direction.
   */
  watchRx(timeoutMs: number, held = false): Promise<void> {
    return this.call('watchRx', timeoutMs, held);
  }

  /** A new offer for a live leg (answering an SDP-less re-INVITE); the answer goes to modify(). */
  async offer(): Promise<string> {
    const r = await this.call('offerLeg');
    this.local.sdp = r.localSdp;
    return r.localSdp;
  }

  /**
   * Plays files, URLs, silence_stream://ms, tone_stream://beep|ringback|dtmf:123 or a teletone script
   * (tone_stream://%(on,off,freq…)), or a file from a sample on ({file, seekSamples}), one after another.
   */
  play(fileOrUrls: PlaySpec | PlaySpec[], opts: { bargeIn?: boolean } = {}): Promise<PlayResult> {
    const list = Array.isArray(fileOrUrls) ? fileOrUrls : [fileOrUrls];
    return this.call('play', list, opts);
  }

  /** Speaks text (or SSML) through the TTS provider. */
  say(text: string, opts: { language?: string; voice?: string; provider?: string; bargeIn?: boolean } = {}): Promise<PlayResult> {
    if (typeof text !== 'string' || !text.trim()) return Promise.reject(new TypeError('say needs text'));
    const spec: SourceSpec = { say: text, language: opts.language, voice: opts.voice, provider: opts.provider };
    return this.call('play', [spec], { bargeIn: opts.bargeIn });
  }

  /** Stops what is playing and everything queued (uuid_break). */
  stopPlayback(): Promise<void> {
    return this.call('stopPlayback');
  }

  /**
   * Sends RFC 4733 telephone-events (the negotiated payload type; ENODTMF without one), or tones in
   * the audio. Refused with EBUSY when more than `maxWaiting` digits (default and ceiling 128) would
   * wait on the leg (worker/leg-dtmf.ts).
   */
  sendDtmf(digits: string, durationMs = 100, form: DtmfForm = 'rfc4733', maxWaiting?: number): Promise<void> {
    return this.call('sendDtmf', digits, durationMs, form, maxWaiting);
  }

  /** The far end negotiated telephone-event (RFC 4733) with this endpoint. */
  get telephoneEvent(): boolean {
    return this.remote.media?.dtmfPayloadType != null;
  }

  /**
   * A digit its owner received outside the media (a SIP INFO): the worker takes it like an RFC 4733
   * one (playback barge-in, a recording's end key) and reports it back as this endpoint's 'dtmf',
   * which the bridged peer's owner relays ('peerDtmf').
   */
  injectDtmf(digit: string, durationMs: number): Promise<void> {
    return this.call('injectDtmf', digit, durationMs);
  }

  /** A digit of this endpoint: its listeners, and the owner of the endpoint bridged to it. */
  private receivedDtmf(e: DtmfEvent): void {
    if (this.destroyed) return;
    this.emit('dtmf', e);
    this.bridgedTo?.emit('peerDtmf', e);
  }

  /** Plays a prompt (barge-in) and collects digits, like play_and_get_digits. */
  async playCollect(opts: PlayCollectOptions): Promise<PlayCollectResult> {
    const min = opts.min ?? 0;
    const max = opts.max ?? 128;
    const tries = opts.tries ?? 1;
    const timeout = opts.timeout ?? 5000;
    const digitTimeout = opts.digitTimeout ?? 3000;
    const terminators = opts.terminators ?? '#';
    const re = opts.regexp ? new RegExp(opts.regexp) : null;
    const specs: SourceSpec[] = [];
    if (opts.file) specs.push(...(Array.isArray(opts.file) ? opts.file : [opts.file]));
    if (opts.say) specs.push({ say: opts.say.text, language: opts.say.language, voice: opts.say.voice });
    let last: PlayCollectResult = { digits: '', terminatorUsed: null };
    for (let attempt = 0; attempt < tries; attempt++) {
      const r = await this.collectOnce(specs, max, timeout, digitTimeout, terminators);
      last = r;
      if (r.digits.length >= min && (!re || re.test(r.digits))) return r;
      if (opts.invalidFile && attempt + 1 < tries) await this.play(opts.invalidFile);
    }
    return { ...last, digits: last.digits.length >= min && (!re || re.test(last.digits)) ? last.digits : '' };
  }

  private collectOnce(specs: SourceSpec[], max: number, timeout: number, digitTimeout: number, terminators: string): Promise<PlayCollectResult> {
    return new Promise((resolve, reject) => {
      let digits = '';
      let timer: NodeJS.Timeout | null = null;
      let played: PlayResult | undefined;
      let playing = specs.length > 0;
      let done = false;
      const finish = (terminatorUsed: string | null) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        this.off('dtmf', onDtmf);
        this.off('destroy', onGone);
        if (playing) this.stopPlayback().catch(() => {});
        resolve({ digits, terminatorUsed, ...played });
      };
      const arm = (ms: number) => {
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => finish(null), ms);
      };
      const onDtmf = (e: DtmfEvent) => {
        if (terminators.includes(e.dtmf)) return finish(e.dtmf);
        digits += e.dtmf;
        if (digits.length >= max) return finish(null);
        if (!playing) arm(digitTimeout);
      };
      const onGone = () => finish(null);
      this.on('dtmf', onDtmf);
      this.once('destroy', onGone);
      if (!playing) return arm(timeout);
      this.call('play', specs, { bargeIn: true }).then(
        (r) => {
          played = r;
          playing = false;
          if (!done) arm(digits.length ? digitTimeout : timeout);
        },
        (err: Error) => {
          if (done) return;
          done = true;
          this.off('dtmf', onDtmf);
          this.off('destroy', onGone);
          reject(err);
        },
      );
    });
  }

  /**
   * Records to a WAV file (16-bit mono at the leg's rate: 8 kHz, 16 kHz on a G.722 or Opus leg; both directions mixed; `separate` adds -in/-out files).
   * Resolves when the recording stops: end_of_silence, end_of_key, duration, stopRecord() or hangup.
   */
  record(path: string, opts: RecordOptions = {}): Promise<RecordResult> {
    if (typeof path !== 'string' || !path) return Promise.reject(new TypeError('record needs a path'));
    return this.call('record', path, opts);
  }

  /**
   * Records as record() does, but resolves as soon as the recorder is armed on the worker: what the leg
   * plays from its next tick on is in the file, so audio started after this resolves is recorded from
   * its first frame (record() alone arms in the order the worker takes requests, which orders nothing
   * against a peer on another worker). `done` settles as record()'s promise; a recording that ends (or
   * whose endpoint goes) before the armed report came resolves with its result's rate.
   */
  startRecord(path: string, opts: RecordOptions = {}): Promise<Recording> {
    if (typeof path !== 'string' || !path) return Promise.reject(new TypeError('record needs a path'));
    const armId = nextArmId++;
    return new Promise<Recording>((resolve, reject) => {
      const done = this.call('record', path, opts, armId);
      this.arming.set(armId, (rate) => resolve({ path, rate, done }));
      // settled first (no report: refused, or ended with its endpoint): the first settlement wins
      void done.then((r) => resolve({ path, rate: r.rate, done }), reject).finally(() => this.arming.delete(armId));
    });
  }

  stopRecord(path?: string): Promise<void> {
    return this.call('stopRecord', path);
  }

  /** Connects this endpoint's audio to another's, both anchored here (recording and DTMF keep working). */
  async bridge(other: Endpoint): Promise<void> {
    if (other === this) throw new Error('cannot bridge an endpoint to itself');
    if (this.destroyed || other.destroyed) throw new Error('endpoint is destroyed');
    await this.unbridge();
    await other.unbridge();
    if (other.host === this.host) {
      await this.call('bridge', other.uuid);
    } else {
      const link = openLink(this.host, other.host);
      await this.host.call('linkLeg', this.uuid, link.id);
      await other.host.call('linkLeg', other.uuid, link.id);
      this.crossLink = other.crossLink = link;
    }
    this.bridgedTo = other;
    other.bridgedTo = this;
  }

  async unbridge(): Promise<void> {
    const peer = this.bridgedTo;
    this.bridgedTo = null;
    if (peer) peer.bridgedTo = null;
    if (this.crossLink) {
      const link = this.crossLink;
      this.crossLink = null;
      if (peer && peer.crossLink === link) peer.crossLink = null;
      await closeLink(link);
    } else if (!this.destroyed) await this.call('unbridge');
  }

  async joinConference(conf: Conference, opts: { mute?: 'in' | 'out' | 'both' } = {}): Promise<{ memberId: string; confUuid: string }> {
    if (this.destroyed) throw new Error('endpoint is destroyed');
    if (this.conference) await this.leaveConference();
    await this.unbridge();
    let r: { memberId: string };
    if (conf.host === this.host) r = await this.host.call('joinConference', conf.uuid, this.uuid, opts);
    else {
      // the mixer lives on the conference's worker; this leg reaches it through a link
      const link = openLink(this.host, conf.host);
      r = await conf.host.call('linkMember', conf.uuid, link.id, this.uuid, opts);
      await this.host.call('linkLeg', this.uuid, link.id);
      this.crossLink = link;
    }
    this.conference = conf;
    return { memberId: r.memberId, confUuid: conf.uuid };
  }

  /** fsmrf's name for joinConference */
  join(conf: Conference, opts: { mute?: 'in' | 'out' | 'both' } = {}) {
    return this.joinConference(conf, opts);
  }

  async leaveConference(): Promise<void> {
    const conf = this.conference;
    if (!conf) return;
    this.conference = null;
    if (this.crossLink) {
      const link = this.crossLink;
      this.crossLink = null;
      await closeLink(link);
    } else await this.host.call('leaveConference', conf.uuid, this.uuid);
  }

  unjoin(): Promise<void> {
    return this.leaveConference();
  }

  /** 'in': the caller's audio goes nowhere; 'out': the caller hears nothing. */
  mute(direction: 'in' | 'out' | 'both' = 'both'): Promise<void> {
    return this.call('mute', direction, true);
  }

  unmute(direction: 'in' | 'out' | 'both' = 'both'): Promise<void> {
    return this.call('mute', direction, false);
  }

  /** Sends the caller's own audio back (the echo action). */
  echo(on = true): Promise<void> {
    return this.call('setEcho', on);
  }

  /**
   * Cancels the echo of what this endpoint sends out of what it receives (a speakerphone hearing the
   * call), before anything else hears the caller (VAD, detectors, recorders, forks, peers): on with its
   * options, or off (`null`). A new call starts a new filter. Rejects with a RangeError on bad options
   * and with ERR_CODEC_UNAVAILABLE when the native module is not built.
   */
  echoCancel(opts: EchoCancelOptions | null): Promise<void> {
    return this.call('echoCancel', opts);
  }

  async forkAudioStart(opts: ForkOptions): Promise<AudioFork> {
    if (this.destroyed) throw new Error('endpoint is destroyed');
    const f = await new AudioFork(this.host, this.uuid, opts).start();
    this.forks.add(f);
    return f;
  }

  async forkAudioStop(fork?: AudioFork): Promise<ForkStats | null> {
    const list = fork ? [fork] : [...this.forks];
    let last: ForkStats | null = null;
    for (const f of list) {
      this.forks.delete(f);
      last = await f.stop();
    }
    return last;
  }

  /**
   * Answering machine detection on the caller's audio (app_amd parameters), run inside the worker.
   * Resolves with HUMAN, MACHINE or NOTSURE and app_amd's cause; rejects if the endpoint goes away.
   */
  amd(opts: AmdRequest = {}): Promise<AmdResult> {
    return this.call('amd', opts);
  }

  /** Cancels a running amd() and waitForBeep() (they reject with ECANCELED). */
  stopAmd(): Promise<void> {
    return this.call('stopAmd');
  }

  /**
   * Waits for the voicemail beep (one sustained pure tone; ringback and speech are ignored).
   * Resolves with the tone's offset since the call; rejects with code ETIMEDOUT after timeoutMs.
   */
  waitForBeep(opts: { timeoutMs?: number } = {}): Promise<BeepResult> {
    return this.call('waitForBeep', opts.timeoutMs ?? 20000);
  }

  /**
   * Starts real-time transcription; segments arrive as 'transcript' events
   * ({ text, final, offsetMs, durationMs, direction: 'in' | 'out' }).
   */
  async transcribeStart(opts: TranscribeOptions = {}): Promise<void> {
    if (this.destroyed) throw new Error('endpoint is destroyed');
    await this.transcription.start(opts);
  }

  /** Stops transcription; resolves after the last segments have been emitted. */
  transcribeStop(): Promise<void> {
    return this.transcription.stop();
  }

  /**
   * Starts the VAD tap in the worker: 'speech' events ({ state: 'start' | 'stop', offsetMs }) where
   * the caller's turns of speech start (after startMs of voice) and stop (after stopMs of silence).
   * Nothing crosses to this thread per frame.
   */
  vadStart(opts: VadTapOptions = {}): Promise<void> {
    return this.call('vadStart', opts);
  }

  /** Stops the VAD tap (a turn in progress reports its 'stop'). */
  vadStop(): Promise<void> {
    return this.call('vadStop');
  }

  getStats(): Promise<EndpointStats> {
    return this.call('stats');
  }

  /** Starts capturing this endpoint's RTP and RTCP, both ways (the first `maxPackets`; core/media/rtp-capture.ts). */
  captureRtp(opts: { maxPackets: number; headersOnly: boolean }): Promise<void> {
    return this.call('captureRtp', opts);
  }

  /** The capture's records so far (core/media/rtp-capture.ts layout), null when none was started. */
  takeRtpCapture(): Promise<Uint8Array | null> {
    return this.call('takeRtpCapture');
  }

  /** Tears the endpoint down; the port is always returned to the pool. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    for (const f of this.forks) f.stop().catch(() => {});
    this.forks.clear();
    // a hangup still delivers the last segments ('transcript' events after 'destroy')
    this.transcription.stop().catch(() => {});
    if (this.crossLink) await (this.conference ? this.leaveConference() : this.unbridge()).catch(() => {});
    await this.onDestroy(this);
  }

  /** @internal an event of this endpoint's leg, from its worker */
  deliver(m: LegEventMessage): void {
    if (this.destroyed) return;
    if (m.name === 'dtmf') this.receivedDtmf(m.data);
    else if (m.name === 'speech') this.emit('speech', m.data);
    else if (m.name === 'rxTimeout') this.emit('rxTimeout', m.data);
    else if (m.name === 'recordArmed') {
      this.arming.get(m.data.armId)?.(m.data.rate);
      this.arming.delete(m.data.armId);
    }
  }

  /** @internal */
  markDestroyed(end: EndpointEnd = { reason: 'destroyed' }): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.conference = null;
    this.transcription.abort();
    // after a worker's death nothing else releases these: the forks' sinks, and a link to a peer on
    // another worker (the peer's side of it stops there)
    for (const f of this.forks) f.stop().catch(() => {});
    this.forks.clear();
    const peer = this.bridgedTo;
    this.bridgedTo = null;
    if (peer?.bridgedTo === this) peer.bridgedTo = null;
    const link = this.crossLink;
    this.crossLink = null;
    if (link) {
      if (peer?.crossLink === link) peer.crossLink = null;
      void closeLink(link);
    }
    this.emit('destroy', end);
  }
}
