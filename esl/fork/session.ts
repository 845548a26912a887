/**
 * One audio fork (one mod_audio_fork "bug" on a channel): a WebSocket client to the customer's URL,
 * dialled through the egress policy, that gets the metadata text frame first and then the channel's
 * audio as binary L16 frames at the rate asked, and whose text frames become mod_audio_fork events.
 * It ends once: stopped (by `stop`, or the channel hanging up), or the connection failing or dropping;
 * every end of the connection is an event except the ones we asked for (esl/README.md, "Audio fork").
 */
import fs from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { EgressRefused, type EgressPolicy } from '../../core/net';
import { Resampler, wavFile, type AudioFork, type Endpoint, type ForkMix } from '../../media-engine';
import type { ForkStart } from './args';
import { decodePlayAudio, injectRateFor, StreamIn, toInjectRate } from './playout';

/** The WebSocket sub-protocol mod_audio_fork asks for (MOD_AUDIO_FORK_SUBPROTOCOL_NAME's default). */
export const SUBPROTOCOL = 'audio.drachtio.org';

/** The playAudio files of every fork in the process are numbered by one counter: two bugs on a channel never share a name. */
let fileSeq = 0;

/** Largest text frame taken from the server; a larger one closes the connection (ws answers 1009). */
const MAX_PAYLOAD = 1024 * 1024;

export interface ForkHost {
  readonly endpoint: Endpoint;
  readonly egress: EgressPolicy;
  /** the opening handshake's time limit (ESL_AUDIO_FORK_CONNECT_TIMEOUT_MS) */
  readonly connectTimeoutMs: number;
  /** a CUSTOM `mod_audio_fork::<name>` event on the channel, with its body (none when undefined) */
  emit(name: string, body?: string): void;
  /** this fork ended: the channel's bug list forgets it */
  ended(): void;
  /** a bug of ours (the engine refused a tap it should take): reported, the fork ends */
  failed(err: Error): void;
  /** the channel's uuid (the playAudio files' names start with it, as the module's) */
  readonly channelUuid: string;
}

type Phase = 'resolving' | 'connecting' | 'open' | 'closed';

/** One direction's audio at the rate the server asked: the engine's frames, resampled when its rate differs. */
class Tap {
  private resampler: Resampler | null = null;
  private out: Int16Array | null = null;

  constructor(
    readonly fork: AudioFork,
    rate: number,
  ) {
    if (fork.rate !== rate) this.resampler = new Resampler(fork.rate, rate);
  }

  convert(frame: Int16Array): Int16Array {
    if (!this.resampler) return frame;
    const out = (this.out ??= new Int16Array(this.resampler.outputLength(frame.length)));
    const n = this.resampler.process(frame, out, frame.length);
    return n === out.length ? out : out.subarray(0, n);
  }

  close(): void {
    this.resampler?.close();
    this.resampler = null;
  }
}

export class ForkSession {
  private phase: Phase = 'resolving';
  private ws: WebSocket | null = null;
  private taps: Tap[] = [];
  private paused = false;
  /** graceful-shutdown: no more audio, the connection closes once what is queued went out */
  private draining = false;
  private overrunReported = false;
  /** stereo: the caller's frames waiting for the same tick's frame of what the caller hears */
  private readonly left: Int16Array[] = [];
  /** why the connection failed, from its 'error', for connect_failed */
  private failure = '';
  /** the server's binary frames while the fork streams bidirectional audio */
  private streamIn: StreamIn | null = null;
  /** audio the server sent before the engine's tap was open, injected once it is */
  private pending: [Int16Array, 8000 | 16000][] = [];
  /** the playAudio files written (bidirectional audio off) */
  private readonly files: string[] = [];
  /** the playAudio files being written, in the order their messages came (their events fire in that order) */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: ForkHost,
    readonly req: ForkStart,
    private readonly url: URL,
  ) {}

  /** Resolves and checks the host, then connects; a refusal or a failure is a connect_failed event, never a throw. */
  async start(): Promise<void> {
    let lookup;
    try {
      lookup = (await this.host.egress.checkDestination(this.url.hostname)).lookup;
    } catch (e) {
      return this.connectFailed(e instanceof EgressRefused ? e.message : 'the destination could not be checked');
    }
    if (this.isOver()) return; // stopped while resolving
    if (this.draining) return this.finish(); // graceful-shutdown while resolving: nothing to connect for
    this.phase = 'connecting';
    const ws = new WebSocket(this.url, SUBPROTOCOL, { handshakeTimeout: this.host.connectTimeoutMs, lookup, followRedirects: false, maxPayload: MAX_PAYLOAD, perMessageDeflate: false });
    this.ws = ws;
    // first: nothing the server or the network does may throw out of here
    ws.on('error', (e: Error) => (this.failure ||= e.message));
    ws.on('open', () => void this.onOpen());
    ws.on('message', (data: WebSocket.RawData, binary: boolean) => {
      // a throw here would be uncaught inside ws and end the process: it ends the fork instead
      try {
        if (!binary) this.onText(rawText(data));
        else this.onBinary(rawBuffer(data));
      } catch (e) {
        this.fail(e);
      }
    });
    ws.on('close', () => this.onClose());
  }

  /** `stop [text]`: the last text frame (if any), a normal close, no event (FreeSWITCH's cleanup). */
  stop(text: string | null): void {
    if (this.phase === 'closed') return;
    const ws = this.ws;
    this.finish();
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) {
      if (text) ws.send(text);
      ws.close(1000);
    } else ws.terminate();
  }

  sendText(text: string): void {
    if (this.phase === 'open' && !this.draining) this.ws!.send(text);
  }

  pause(on: boolean): void {
    this.paused = on;
    this.left.length = 0;
  }

  /** graceful-shutdown: audio stops, the server gets a normal close after what is queued. */
  gracefulShutdown(): void {
    this.draining = true;
    this.left.length = 0;
    if (this.phase === 'open') this.ws!.close(1000);
  }

  /** stop_play, killAudio: what the server sent to play and is not played yet is dropped. */
  stopPlay(): void {
    this.pending = [];
    void this.taps[0]?.fork.clearInjected().catch(() => undefined);
  }

  private async onOpen(): Promise<void> {
    if (this.phase !== 'connecting') return;
    this.phase = 'open';
    // graceful-shutdown came while connecting: nothing goes out, the server gets the normal close now
    // (no connect event: the client asked for the end before the fork was ever up)
    if (this.draining) return void this.ws!.close(1000);
    this.host.emit('connect');
    if (this.req.metadata) this.ws!.send(this.req.metadata);
    try {
      await this.openTaps();
    } catch (e) {
      this.fail(e);
    }
  }

  /**
   * A bug of ours while the fork runs (the engine refusing a tap, a throw handling what the server
   * sent): reported (the server's `failed`), `mod_audio_fork::error` with `{"reason": …}`, the fork
   * stopped; the channel goes on. Nothing once the fork ended (the channel went meanwhile).
   */
  private fail(e: unknown): void {
    if (this.isOver()) return;
    const err = e instanceof Error ? e : new Error(String(e));
    this.host.failed(err);
    this.host.emit('error', JSON.stringify({ reason: err.message }));
    this.stop(null);
  }

  /** The engine's forks: the caller (`mono`), both mixed (`mixed`), or both side by side (`stereo`). */
  private async openTaps(): Promise<void> {
    const mixes: ForkMix[] = this.req.mix === 'mono' ? ['in'] : this.req.mix === 'mixed' ? ['both'] : ['in', 'out'];
    for (const [i, mix] of mixes.entries()) {
      const fork = await this.host.endpoint.forkAudioStart({ mix, legRate: this.req.rate > 8000, onFrame: (f) => this.onFrame(i, f) });
      if (this.isOver()) return void this.host.endpoint.forkAudioStop(fork).catch(() => undefined);
      this.taps.push(new Tap(fork, this.req.rate));
    }
    for (const [samples, rate] of this.pending.splice(0)) this.taps[0]?.fork.inject(samples, rate);
  }

  /**
   * A playAudio clip written as a WAV file in the temporary directory (`<uuid>_<bug>_<n>.tmp.wav`, the bug name's
   * characters other than letters, digits, `-` and `_` as `_`, n unique in the process), then `play_audio` with its `file`; a failed write fires it without `file`. Written
   * after the ones before, so the events keep the messages' order; the file is removed when the fork
   * ends, and one whose fork ended while it was written is removed at once with no event.
   */
  private playFile(samples: Int16Array, rate: number, rest: Record<string, unknown>): void {
    const bug = this.req.bug.replace(/[^A-Za-z0-9_-]/g, '_');
    const file = path.join(os.tmpdir(), `${this.host.channelUuid}_${bug}_${fileSeq++}.tmp.wav`);
    const bytes = wavFile(samples, rate);
    this.writing = this.writing
      .then(async () => {
        if (this.isOver()) return;
        const ok = await writeFile(file, bytes).then(
          () => true,
          () => false,
        );
        if (this.isOver()) return void fs.rm(file, { force: true }, () => undefined);
        if (ok) this.files.push(file);
        this.host.emit('play_audio', JSON.stringify(ok ? { ...rest, file } : rest));
      })
      .catch((e: unknown) => this.fail(e));
  }

  /** Audio from the server into what the channel sends, mixed over what it plays (the module's playout buffer). */
  private inject(samples: Int16Array, rate: 8000 | 16000): void {
    if (samples.length === 0) return;
    const tap = this.taps[0];
    if (tap) tap.fork.inject(samples, rate);
    else this.pending.push([samples, rate]);
  }

  /** A binary frame: raw L16 at the stream rate when the fork streams bidirectional audio; else dropped, as the module does. */
  private onBinary(frame: Buffer): void {
    const bi = this.req.bidirectional;
    if (this.phase !== 'open' || !bi.enabled || !bi.stream) return;
    this.streamIn ??= new StreamIn(bi.streamRate);
    this.inject(this.streamIn.convert(frame), injectRateFor(bi.streamRate));
  }

  /**
   * playAudio: with bidirectional audio on (fsmrf's default) the audio is played into the channel at once
   * and \`play_audio\` fires with the message's data without its audio; with it off the audio is written
   * to a WAV file the application may play, named in the event's \`file\` (removed when the fork ends).
   */
  private onPlayAudio(data: unknown): void {
    if (!data || typeof data !== 'object') return; // the module logs "missing data payload" and goes on
    const { audioContent: _audio, ...rest } = data as Record<string, unknown>;
    const audio = decodePlayAudio(data as Record<string, unknown>);
    if ('samples' in audio && !this.req.bidirectional.enabled) return this.playFile(audio.samples, audio.rate, rest);
    if ('samples' in audio) this.inject(toInjectRate(audio.samples, audio.rate), injectRateFor(audio.rate));
    // after the files being written: the events keep the messages' order
    this.writing = this.writing
      .then(() => {
        if (!this.isOver()) this.host.emit('play_audio', JSON.stringify(rest));
      })
      .catch((e: unknown) => this.fail(e));
  }

  private onFrame(side: number, frame: Int16Array): void {
    const tap = this.taps[side];
    if (!tap || this.phase !== 'open' || this.paused || this.draining || this.taps.length < (this.req.mix === 'stereo' ? 2 : 1)) return;
    const pcm = tap.convert(frame);
    if (this.req.mix !== 'stereo') return this.sendAudio(pcm.slice());
    if (side === 0) {
      this.left.push(pcm.slice());
      // the other side lags or dropped a frame: keep at most 5 (100 ms) waiting
      if (this.left.length > 5) this.left.shift();
      return;
    }
    const l = this.left.shift();
    if (!l) return;
    const both = new Int16Array(l.length * 2);
    for (let k = 0; k < l.length; k++) {
      both[2 * k] = l[k]!;
      both[2 * k + 1] = pcm[k] ?? 0;
    }
    this.sendAudio(both);
  }

  /** A binary frame of L16 (host order, little-endian), unless two seconds of audio already wait unsent. */
  private sendAudio(pcm: Int16Array): void {
    const ws = this.ws!;
    const channels = this.req.mix === 'stereo' ? 2 : 1;
    if (ws.bufferedAmount > this.req.rate * 2 * channels * 2) {
      // FreeSWITCH drops frames once its buffer (2 s by default) is full, and says so once
      if (!this.overrunReported) this.host.emit('buffer_overrun');
      this.overrunReported = true;
      return;
    }
    ws.send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), { binary: true });
  }

  /** A text frame from the server: `{"type": …, "data": …}` as mod_audio_fork's processIncomingMessage reads it. */
  private onText(text: string): void {
    if (this.phase !== 'open') return;
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return; // FreeSWITCH logs "could not parse message" and goes on
    }
    if (!msg || typeof msg !== 'object' || typeof (msg as { type?: unknown }).type !== 'string') return;
    const { type, data } = msg as { type: string; data?: unknown };
    const body = data === undefined ? undefined : JSON.stringify(data);
    if (type === 'json') this.host.emit('json', JSON.stringify(msg));
    else if (type === 'playAudio') this.onPlayAudio(data);
    else if (type === 'killAudio') {
      this.host.emit('kill_audio');
      this.stopPlay();
      void this.host.endpoint.stopPlayback().catch(() => undefined);
    } else if (type === 'transcription' || type === 'transfer' || type === 'disconnect' || type === 'error') this.host.emit(type, body);
    // any other type is dropped, as FreeSWITCH drops a type it does not know
  }

  private onClose(): void {
    const phase = this.phase;
    if (phase === 'closed') return; // we closed it: no event (CONNECTION_CLOSED_GRACEFULLY)
    this.finish();
    if (phase === 'open' && !this.draining) this.host.emit('disconnect');
    else if (phase === 'connecting') this.host.emit('connect_failed', JSON.stringify({ reason: this.failure || 'the connection closed before it was established' }));
  }

  private connectFailed(reason: string): void {
    if (this.phase === 'closed') return;
    this.finish();
    this.host.emit('connect_failed', JSON.stringify({ reason }));
  }

  /** Whether the fork ended (read after an await: stop() may have run meanwhile). */
  private isOver(): boolean {
    return this.phase === 'closed';
  }

  /** Ends the fork once: the engine's taps released, the channel forgets it. */
  private finish(): void {
    this.phase = 'closed';
    this.left.length = 0;
    this.pending = [];
    this.streamIn?.close();
    this.streamIn = null;
    for (const f of this.files.splice(0)) fs.rm(f, { force: true }, () => undefined);
    for (const t of this.taps.splice(0)) {
      t.close();
      void this.host.endpoint.forkAudioStop(t.fork).catch(() => undefined);
    }
    this.host.ended();
  }
}

function rawBuffer(data: WebSocket.RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
