/**
 * The live CallPort (media-app/flow/call-port.ts) over a LiveCall: SIP through its drachtio-srf
 * dialog, audio through its media-engine endpoint. Media methods stop the endpoint's playback when
 * the runner's signal aborts.
 */
import { EventEmitter } from 'node:events';
import type {
  AmdResult,
  CallInfo,
  CallPort,
  ConnectRequest,
  ConnectResult,
  DigitsRequest,
  DigitsResult,
  OriginateRequest,
  RecordingRequest,
} from '../flow/call-port';
import { collectDigits } from '../flow/digit-collector';
import { abortError, realClock } from '../flow/clock';
import { callsRepo } from '../../core/repos/calls';
import { isMediaUrl } from '../../core/flow/options/common';
import type { LiveCall } from './live-call';
import type { CallFactory } from './factory';
import { Recordings } from './recordings';

export class LiveCallPort extends EventEmitter implements CallPort {
  private readonly recordings: Recordings;

  constructor(readonly call: LiveCall, private readonly factory: CallFactory, private readonly activeflowId: () => string) {
    super();
    this.on('error', () => undefined);
    call.on('status', (s) => this.emit('status', s));
    call.on('hangup', (h) => this.emit('hangup', h));
    call.on('dtmf', (digit: string) => this.emit('dtmf', digit));
    this.recordings = new Recordings(factory.deps, call, activeflowId);
    this.recordings.on('recording_ended', (ev) => this.emit('recording_ended', ev));
  }

  get info(): CallInfo {
    const r = this.call.row;
    return {
      id: r.id,
      direction: r.direction,
      status: r.status,
      master_call_id: r.master_call_id,
      source: r.source,
      destination: r.destination,
    };
  }

  private get ep() {
    const ep = this.call.endpoint;
    if (!ep || this.call.isEnded) throw new Error('call has no media');
    return ep;
  }

  /** Runs a media operation; on abort, stops playback and rejects. */
  private async media<T>(signal: AbortSignal, op: () => Promise<T>): Promise<T> {
    if (signal.aborted) throw abortError(signal);
    const ep = this.ep;
    const onAbort = () => void ep.stopPlayback().catch(() => undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await op();
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

  async talk(req: { text: string; language: string; voice_id?: string }, signal: AbortSignal): Promise<void> {
    await this.call.answer();
    await this.media(signal, () => this.ep.say(req.text, { language: req.language || undefined, voice: req.voice_id || undefined }));
  }

  async play(urls: string[], signal: AbortSignal): Promise<void> {
    // a ${var} may have turned into anything: only http(s) audio is fetched, never a local path
    const bad = urls.find((u) => !isMediaUrl(u));
    if (bad !== undefined) throw new Error(`play: not an http or https URL: ${bad.slice(0, 200)}`);
    await this.call.answer();
    await this.media(signal, () => this.ep.play(urls));
  }

  async beep(signal: AbortSignal): Promise<void> {
    await this.call.answer();
    await this.media(signal, () => this.ep.play('tone_stream://beep'));
  }

  async collectDigits(req: DigitsRequest, signal: AbortSignal): Promise<DigitsResult> {
    await this.call.answer();
    return collectDigits(this, realClock, req, signal);
  }

  async sendDigits(req: { digits: string; duration: number; interval: number }, signal: AbortSignal): Promise<void> {
    await this.call.answer();
    await this.media(signal, () => this.ep.sendDtmf(req.digits, req.duration || 100));
  }

  async recordingStart(req: RecordingRequest): Promise<{ recording_id: string }> {
    await this.call.answer();
    return this.recordings.start(req);
  }

  /** recording_start command: the id control-api chose for the recording. */
  async recordingStartWithId(req: RecordingRequest & { on_end_flow_id?: string }, id: string): Promise<{ recording_id: string }> {
    return this.recordings.start(req, id);
  }

  recordingStop(): Promise<void> {
    return this.recordings.stop();
  }

  /** Answering-machine detection on what the far end says (media-engine endpoint.amd()). */
  async amd(signal: AbortSignal): Promise<{ result: AmdResult; cause: string; offsetMs: number }> {
    await this.call.answer();
    const ep = this.ep;
    const r = await this.analysis(signal, ep, () => ep.amd());
    return { result: r.result.toLowerCase() as AmdResult, cause: r.cause, offsetMs: r.offsetMs };
  }

  /** Waits for a voicemail beep (voicemail drop); null when none comes within timeoutMs. */
  async waitForBeep(timeoutMs: number, signal: AbortSignal): Promise<{ offsetMs: number; frequency: number } | null> {
    const ep = this.ep;
    try {
      return await this.analysis(signal, ep, () => ep.waitForBeep({ timeoutMs }));
    } catch (err) {
      if ((err as { code?: string }).code === 'ETIMEDOUT') return null;
      throw err;
    }
  }

  /** Runs an endpoint analysis that stops (stopAmd) when the runner's signal aborts. */
  private async analysis<T>(signal: AbortSignal, ep: NonNullable<LiveCall['endpoint']>, op: () => Promise<T>): Promise<T> {
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
    await this.call.answer();
    const ep = this.ep;
    await ep.echo(true);
    try {
      await realClock.sleep(req.duration > 0 ? req.duration : 180_000, signal).catch(() => undefined);
    } finally {
      if (!this.call.isEnded) await ep.echo(false).catch(() => undefined);
    }
    if (signal.aborted) throw abortError(signal);
  }

  hangup(reason: string): Promise<void> {
    return reason === 'amd' ? this.hangupAmd() : this.call.hangup(reason);
  }

  /** AMD's hangup: terminating, then BYE, so the call records hangup_reason amd (voipbin-notes §2). */
  private async hangupAmd(): Promise<void> {
    if (this.call.isEnded) return;
    await this.call.setStatus('terminating');
    await this.call.terminate('amd');
  }

  async mute(direction: 'both' | 'in' | 'out'): Promise<void> {
    await this.factory.mute(this.call, direction, true);
  }

  connect(req: ConnectRequest, signal: AbortSignal): Promise<ConnectResult> {
    return this.factory.connect(this.call, req, signal);
  }

  async hangupReasonOf(callId: string): Promise<string | undefined> {
    const row = await callsRepo(this.factory.deps.db).get(callId);
    return row && row.status === 'hangup' ? row.hangup_reason : undefined;
  }

  originate(req: OriginateRequest): Promise<{ call_ids: string[] }> {
    return this.factory.originateFromFlow(this.call.row.customer_id, req, this.call);
  }
}
