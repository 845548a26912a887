/**
 * The media backend over drachtio-fsmrf (README.md beside): one fsmrf MediaServer connected to a
 * FreeSWITCH event socket (MEDIA_SERVER=freeswitch://host:port?password=…), an fsmrf Endpoint per call
 * leg made through fsmrf's createEndpoint on media-app's own Srf, and the port's methods mapped to the
 * Endpoint's: SDP offer/answer, play, say (speak), playCollect, record, bridge, mute, destroy. What the
 * backend cannot do (the AI voice taps, echo cancellation, VAD, transcription taps, RTP capture) throws
 * MediaBackendUnsupported naming the backend: never a silent no-op.
 */
import type { Endpoint as FsEndpoint, MediaServer as FsMediaServer } from 'drachtio-fsmrf';
import type { PlayCollectOptions, PlayCollectResult, PlayResult } from '../../../media-engine';
import { MediaBackendUnsupported } from '../port';
import { connectSwitch } from './connect';
import { eslArg, eslText } from './esl-arg';
import { LegSocket } from './leg-socket';

export interface FsmrfSetting {
  host: string;
  port: number;
  password: string;
}

/** The TTS engine and voice `say` asks the switch for (speak `<engine>|<voice>|<text>`). */
const DEFAULT_TTS = { engine: 'espeak-ng', voice: 'en-us' };

/** A string of the switch's playback_* variables as a number (0 when absent). */
const num = (v: string | null | undefined): number => (v ? Number(v) || 0 : 0);

function playResult(r: { playbackSeconds?: string | null; playbackMilliseconds?: string | null; playbackLastOffsetPos?: string | null }): PlayResult {
  return { playbackSeconds: num(r.playbackSeconds), playbackMilliseconds: num(r.playbackMilliseconds), playbackLastOffsetPos: num(r.playbackLastOffsetPos), interrupted: false };
}

/** One call leg's media on the switch: an fsmrf Endpoint behind the port's method names. */
export class FsmrfCallEndpoint {
  destroyed = false;
  /** the channel socket: what is pending when it ends rejects (leg-socket.ts) */
  private readonly socket: LegSocket;

  constructor(readonly fs: FsEndpoint) {
    this.socket = new LegSocket(fs);
  }

  get id(): string {
    return this.fs.uuid;
  }

  /** our side's SDP (the switch's answer or offer) */
  get localSdp(): string {
    return this.fs.local.sdp ?? '';
  }

  /** The far end's SDP, once known (a late offer's answer): `uuid_media`-less re-offer through fsmrf's modify. */
  async modify(remoteSdp: string): Promise<string> {
    await this.fs.modify(remoteSdp);
    return this.localSdp;
  }

  async play(files: string | string[]): Promise<PlayResult> {
    const checked = Array.isArray(files) ? files.map((f) => eslArg('play file', f)) : eslArg('play file', files);
    return this.socket.run('play', async () => playResult(await this.fs.play(checked)));
  }

  /** Text to speech through the switch's `speak` (its TTS engine and voice; ours when the switch is esl/). */
  async say(text: string, opts: { voice?: string; provider?: string } = {}): Promise<PlayResult> {
    const speak = {
      ttsEngine: eslArg('say provider', opts.provider ?? DEFAULT_TTS.engine, { pipe: true }),
      voice: eslArg('say voice', opts.voice ?? DEFAULT_TTS.voice, { pipe: true }),
      text: eslText('say text', text),
    };
    const started = Date.now();
    await this.socket.run('say', () => this.fs.speak(speak));
    // speak reports no playback_* variables: the time it took is what was spoken
    const ms = Date.now() - started;
    return { playbackSeconds: Math.floor(ms / 1000), playbackMilliseconds: ms, playbackLastOffsetPos: 0, interrupted: false };
  }

  /** play_and_get_digits: one prompt file (a `say` prompt is refused: the switch takes a file). */
  async playCollect(opts: PlayCollectOptions): Promise<PlayCollectResult> {
    if (opts.say) throw new MediaBackendUnsupported('fsmrf', 'a spoken prompt while collecting digits (play_and_get_digits takes a file)');
    const file = eslArg('playCollect file', Array.isArray(opts.file) ? opts.file.join('!') : (opts.file ?? 'silence_stream://1'));
    const regexp = opts.regexp instanceof RegExp ? opts.regexp.source : opts.regexp;
    if (regexp) eslArg('playCollect regexp', regexp);
    if (opts.invalidFile) eslArg('playCollect invalidFile', opts.invalidFile);
    if (opts.terminators) eslArg('playCollect terminators', opts.terminators);
    const collect = {
      file,
      min: opts.min ?? 1,
      max: opts.max ?? 128,
      tries: opts.tries ?? 1,
      timeout: opts.timeout ?? 5000,
      digitTimeout: opts.digitTimeout ?? opts.timeout ?? 5000,
      terminators: opts.terminators ?? '#',
      ...(opts.invalidFile ? { invalidFile: opts.invalidFile } : {}),
      ...(regexp ? { regexp } : {}),
    };
    const r = await this.socket.run('playCollect', () => this.fs.playCollect(collect));
    return { digits: r.digits ?? '', terminatorUsed: r.terminatorUsed || null, playbackSeconds: num(r.playbackSeconds), playbackMilliseconds: num(r.playbackMilliseconds) };
  }

  async record(file: string, opts: { timeLimitSecs?: number } = {}): Promise<{ recordMilliseconds: number }> {
    const checked = eslArg('record file', file);
    const r = await this.socket.run('record', () => this.fs.record(checked, opts.timeLimitSecs ? { timeLimitSecs: opts.timeLimitSecs } : {}));
    return { recordMilliseconds: num(r.recordMilliseconds) };
  }

  bridge(other: FsmrfCallEndpoint): Promise<void> {
    return this.socket.run('bridge', () => this.fs.bridge(other.fs));
  }

  unbridge(): Promise<void> {
    return this.socket.run('unbridge', () => this.fs.unbridge());
  }

  async mute(): Promise<void> {
    await this.socket.run('mute', () => this.fs.mute());
  }

  async unmute(): Promise<void> {
    await this.socket.run('unmute', () => this.fs.unmute());
  }

  // What needs the embedded engine's own taps: refused, by name.
  forkAudioStart(): Promise<never> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', "the AI voice path (the engine's audio taps)"));
  }
  echoCancel(): Promise<never> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', 'echo cancellation'));
  }
  vadStart(): Promise<never> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', 'voice activity detection'));
  }
  transcribeStart(): Promise<never> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', 'live transcription'));
  }
  captureRtp(): Promise<never> {
    return Promise.reject(new MediaBackendUnsupported('fsmrf', 'RTP capture'));
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.fs.destroy();
  }
}

/** The connection to the switch and the endpoints made on it. */
export class FsmrfBackend {
  readonly name = 'fsmrf' as const;

  private constructor(private readonly ms: FsMediaServer) {}

  /**
   * Connects fsmrf to the event socket within `connectTimeoutMs` (connect.ts; rejects with a
   * SwitchConnectError). `srf`: media-app's drachtio-srf (fsmrf sends its INVITEs to the switch's SIP
   * profile through it); `listenAddress`: where fsmrf's outbound-socket server listens (loopback).
   */
  static async connect(srf: unknown, setting: FsmrfSetting, opts: { connectTimeoutMs: number; listenAddress?: string }): Promise<FsmrfBackend> {
    const ms = await connectSwitch(srf, setting, { timeoutMs: opts.connectTimeoutMs, listenAddress: opts.listenAddress ?? '127.0.0.1' });
    return new FsmrfBackend(ms);
  }

  /** A leg's endpoint: the switch answers `remoteSdp` (an inbound offer), or offers when it is absent. */
  async createEndpoint(opts: { remoteSdp?: string } = {}): Promise<FsmrfCallEndpoint> {
    return new FsmrfCallEndpoint(await this.ms.createEndpoint({ remoteSdp: opts.remoteSdp ?? null }));
  }

  /** The AI voice path needs the embedded engine's taps: a flow's ai_talk fails with this reason here. */
  refuseAiTalk(): MediaBackendUnsupported {
    return new MediaBackendUnsupported('fsmrf', 'ai_talk (the AI voice path)');
  }

  close(): void {
    this.ms.disconnect();
  }
}
