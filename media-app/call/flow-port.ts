/**
 * The live CallPort (media-app/flow/call-port.ts) over a CallSession: SIP through its dialog, audio
 * through its endpoint. Each media operation declares its preconditions once (NEEDS); the port
 * ensures them before the operation (answering the call when it must be up), so flow actions just
 * ask for the operation. Media methods stop the endpoint's playback when the runner's signal aborts.
 */
import { EventEmitter } from 'node:events';
import type { PlayResult } from '../../media-engine';
import type { CallEndpoint } from '../media-server/endpoint';
import type { AmdResult, CallInfo, CallPort, ConnectRequest, ConnectResult, DigitsRequest, DigitsResult, HangupInfo, OriginateRequest, RecordingEnded, RecordingRequest } from '../flow/call-port';
import type { CallStatus } from '../../core/calls/model';
import { collectDigits } from '../flow/digit-collector';
import { abortError, realClock } from '../kit/clock';
import { callsRepo } from '../../core/repos/calls';
import { isMediaUrl } from '../../core/flow/options/common';
import type { CallSession } from './session';
import { forgetPeer } from './close-reason';
import { promptKind, tracePlay } from '../kit/media-trace';
import { talkVoiceFor } from '../../core/speech/talk-voices';
import { Speaker } from '../voices';
import { BEEP_TONE } from '../kit/tones';

/** What a media operation needs of its call: not ending, answered (up), an endpoint. */
type Precondition = 'live' | 'answered' | 'media';

const NEEDS = {
  media: ['live', 'answered', 'media'],
  talk: ['live', 'answered', 'media'],
  play: ['live', 'answered', 'media'],
  beep: ['live', 'answered', 'media'],
  collectDigits: ['live', 'answered'],
  sendDigits: ['live', 'answered', 'media'],
  recordingStart: ['live', 'answered', 'media'],
  amd: ['live', 'answered', 'media'],
  echo: ['live', 'answered', 'media'],
  /** voicemail drop listens before (and without) answering */
  waitForBeep: ['live', 'media'],
} as const satisfies Record<string, readonly Precondition[]>;

export type MediaOp = keyof typeof NEEDS;

/** The legs a flow port asks its node for (CallFactory). */
export interface CallLegs {
  connect(master: CallSession, req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult>;
  originateFromFlow(customerId: string, req: OriginateRequest, master: CallSession | null): Promise<{ call_ids: string[] }>;
  mute(call: CallSession, direction: 'both' | 'in' | 'out', on: boolean): Promise<void>;
}

interface FlowPortEvents {
  status: [status: CallStatus];
  hangup: [info: HangupInfo];
  dtmf: [digit: string];
  recording_ended: [ev: RecordingEnded];
  error: [err: Error];
}

export class FlowPort extends EventEmitter<FlowPortEvents> implements CallPort {
  constructor(
    readonly call: CallSession,
    private readonly legs: CallLegs,
  ) {
    super();
    this.on('error', () => undefined);
    call.on('status', (s) => this.emit('status', s));
    call.on('hangup', (h) => this.emit('hangup', h));
    call.on('dtmf', (digit) => this.emit('dtmf', digit));
    call.recordings.on('recording_ended', (ev) => this.emit('recording_ended', ev));
  }

  get info(): CallInfo {
    const r = this.call.row;
    return { id: r.id, direction: r.direction, status: r.status, master_call_id: r.master_call_id, source: r.source, destination: r.destination };
  }

  /** Ensures the preconditions of `op`; resolves with the endpoint when the operation needs one. */
  private async ready(op: MediaOp, signal: AbortSignal): Promise<CallEndpoint> {
    const needs: readonly Precondition[] = NEEDS[op];
    if (signal.aborted) throw abortError(signal);
    // the call does something else after its bridged party died: its end is no longer that party's
    forgetPeer(this.call);
    if (needs.includes('live') && this.call.isEnded) throw new Error(`${op}: the call has ended`);
    // media flows once the 200 OK has left; the answer's status write goes on beside it
    if (needs.includes('answered')) await this.call.answerForMedia();
    if (signal.aborted) throw abortError(signal);
    const ep = this.call.endpoint;
    if (!ep || ep.destroyed || this.call.isEnded) throw new Error(`${op}: the call has no media`);
    return ep;
  }

  /** Runs a media operation once its preconditions hold; on abort, stops playback and rejects. */
  private async media<T>(op: MediaOp, signal: AbortSignal, run: (ep: CallEndpoint) => Promise<T>): Promise<T> {
    const ep = await this.ready(op, signal);
    const onAbort = () => void ep.stopPlayback().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await run(ep);
      if (signal.aborted) throw abortError(signal);
      return r;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async answer(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw abortError(signal);
    await this.call.answer();
  }

  /** The call is up with media (actions driving the endpoint through a service: ai_talk, queues). */
  async prepareMedia(signal: AbortSignal): Promise<void> {
    await this.ready('media', signal);
  }

  async talk(req: { text: string; language: string; provider?: string; voice_id?: string }, signal: AbortSignal): Promise<void> {
    // the action's voice as named: one the node cannot speak with fails the action, never another voice
    const tts = { 'openvoice.tts.language': req.language || 'default', 'openvoice.tts.voice': req.voice_id || 'default', 'openvoice.tts.characters': req.text.length };
    const cloud = talkVoiceFor(this.call.deps.config.talkVoices, req.provider);
    if (cloud) {
      await this.media('talk', signal, (ep) => tracePlay('tts', 1, { ...tts, 'openvoice.tts.vendor': cloud.type }, () => this.talkCloud(ep, cloud, req, signal)));
      return;
    }
    await this.media('talk', signal, (ep) =>
      tracePlay('tts', 1, tts, () => ep.say(req.text, { language: req.language || undefined, voice: req.voice_id || undefined, provider: req.provider || undefined })),
    );
  }

  /**
   * talk through the cloud voice the operator mapped the provider to (core/speech/talk-voices.ts):
   * streamed into the call as it arrives, no fallback (a vendor error fails the action, and so the
   * flow). The action's voice_id, when set, is the vendor's voice id.
   */
  private async talkCloud(ep: CallEndpoint, cloud: { type: string; voice: string }, req: { text: string; language: string; voice_id?: string }, signal: AbortSignal): Promise<PlayResult> {
    const d = this.call.deps;
    const speaker = new Speaker(ep, { type: cloud.type, voice: req.voice_id || cloud.voice, key: '' }, null, req.language || 'en-US', 0, {
      egress: d.egress,
      vendors: d.config.voices,
      cacheDir: d.config.dataDir,
      onFallback: () => undefined,
    });
    const started = Date.now();
    try {
      const spoken = await speaker.speak(req.text, signal);
      const ms = Date.now() - started;
      const synthesized = [{ provider: cloud.type, cached: false, startedAt: started, endedAt: started + spoken.firstByteMs }];
      return { playbackSeconds: Math.round(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: 0, interrupted: signal.aborted, synthesized };
    } finally {
      await speaker.stop();
    }
  }

  async play(urls: string[], signal: AbortSignal): Promise<void> {
    // a ${var} may have turned into anything: only http(s) audio is fetched, never a local path
    const bad = urls.find((u) => !isMediaUrl(u));
    if (bad !== undefined) throw new Error(`play: not an http or https URL: ${bad.slice(0, 200)}`);
    await this.media('play', signal, (ep) => tracePlay(promptKind(urls[0]), urls.length, null, () => ep.play(urls)));
  }

  async beep(signal: AbortSignal): Promise<void> {
    await this.media('beep', signal, (ep) => tracePlay('tone', 1, null, () => ep.play(BEEP_TONE)));
  }

  async collectDigits(req: DigitsRequest, signal: AbortSignal): Promise<DigitsResult> {
    if (signal.aborted) throw abortError(signal);
    if (this.call.isEnded) throw new Error('collectDigits: the call has ended');
    await this.call.answer();
    return collectDigits(this, realClock, req, signal);
  }

  async sendDigits(req: { digits: string; duration: number; interval: number }, signal: AbortSignal): Promise<void> {
    await this.media('sendDigits', signal, () => this.call.sendDigits(req.digits, req.duration || 100));
  }

  async recordingStart(req: RecordingRequest): Promise<{ recording_id: string }> {
    await this.ready('recordingStart', new AbortController().signal);
    return this.call.recordings.start(req);
  }

  recordingStop(): Promise<void> {
    return this.call.recordings.stop();
  }

  /** Answering-machine detection on what the far end says (media-engine endpoint.amd()). */
  async amd(signal: AbortSignal): Promise<{ result: AmdResult; cause: string; offsetMs: number }> {
    const ep = await this.ready('amd', signal);
    const r = await this.analysis(signal, ep, () => ep.amd());
    return { result: r.result.toLowerCase() as AmdResult, cause: r.cause, offsetMs: r.offsetMs };
  }

  /** Waits for a voicemail beep (voicemail drop); null when none comes within timeoutMs. */
  async waitForBeep(timeoutMs: number, signal: AbortSignal): Promise<{ offsetMs: number; frequency: number } | null> {
    const ep = await this.ready('waitForBeep', signal);
    try {
      return await this.analysis(signal, ep, () => ep.waitForBeep({ timeoutMs }));
    } catch (err) {
      if ((err as { code?: string }).code === 'ETIMEDOUT') return null;
      throw err;
    }
  }

  /** Runs an endpoint analysis that stops (stopAmd) when the runner's signal aborts. */
  private async analysis<T>(signal: AbortSignal, ep: CallEndpoint, op: () => Promise<T>): Promise<T> {
    if (signal.aborted) throw abortError(signal);
    const onAbort = () => void ep.stopAmd().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await op();
    } catch (err) {
      if (signal.aborted) throw abortError(signal);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async echo(req: { duration: number; stream: boolean }, signal: AbortSignal): Promise<void> {
    const ep = await this.ready('echo', signal);
    await ep.echo(true);
    try {
      await realClock.sleep(req.duration > 0 ? req.duration : 180_000, signal).catch(() => undefined);
    } finally {
      if (!this.call.isEnded) await ep.echo(false).catch(() => undefined);
    }
    if (signal.aborted) throw abortError(signal);
  }

  hangup(reason: string): Promise<void> {
    if (reason === 'amd') return this.hangupAmd();
    // An unanswered inbound call is refused with the reason's SIP status (TwiML <Reject>): busy → 486 Busy Here, failed → 603 Decline.
    if (this.call.isOffered && (reason === 'busy' || reason === 'failed')) return this.call.rejectWith(reason === 'busy' ? 486 : 603);
    return this.call.hangup(reason);
  }

  /** AMD's hangup: terminating, then BYE, so the call records hangup_reason amd (core/calls/model.ts). */
  private async hangupAmd(): Promise<void> {
    if (this.call.isEnded) return;
    await this.call.setStatus('terminating');
    await this.call.terminate('amd');
  }

  async mute(direction: 'both' | 'in' | 'out'): Promise<void> {
    await this.legs.mute(this.call, direction, true);
  }

  duck(on: boolean): Promise<void> {
    return this.call.mediaState.set({ ducked: on });
  }

  async connect(req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult> {
    // as play's: a ${var} may have turned the hold music's URL into a local path; nothing is dialled then
    const music = req.hold_music;
    if (typeof music === 'object' && !isMediaUrl(music.url)) throw new Error(`connect: hold_music.url is not an http or https URL: ${music.url.slice(0, 200)}`);
    forgetPeer(this.call);
    return this.legs.connect(this.call, req, signal);
  }

  recordingEnded(recordingId: string): RecordingEnded | undefined {
    return this.call.recordings.endedHow(recordingId);
  }

  async hangupReasonOf(callId: string): Promise<string | undefined> {
    const row = await callsRepo(this.call.deps.db).get(callId);
    return row && row.status === 'hangup' ? row.hangup_reason : undefined;
  }

  originate(req: OriginateRequest): Promise<{ call_ids: string[] }> {
    return this.legs.originateFromFlow(this.call.row.customer_id, req, this.call);
  }
}
