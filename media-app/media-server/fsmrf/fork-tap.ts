/**
 * Audio taps on the fsmrf backend (README.md beside, "Audio taps"): the switch's mod_audio_fork
 * (`uuid_audio_fork <uuid> start <ws-url> …`) sends a leg's audio as binary 16-bit little-endian PCM to a
 * WebSocket server of media-app's, one per backend (ForkTapServer: loopback and port 0 unless
 * configured), where a per-fork token in the URL's path is the only way in: a connection without a
 * waiting token is refused (403) before the upgrade, and a token serves one connection. Each 20 ms frame
 * goes to the fork's onFrame once, in order, however the switch cut its messages. Audio injected goes
 * back on the same socket (the fork's bidirectional streaming, played into the channel as it comes);
 * clearInjected is `stop_play`. stop ends the switch's fork, then the socket. A socket that drops, or
 * sends what a fork refuses, ends the fork (`ended` says why) and the switch's bug with it (a failure to
 * stop it logged); a switch that never connects rejects forkAudioStart after
 * `connectTimeoutMs`, never a hang, and one that says its connect failed (mod_audio_fork::connect_failed)
 * at once. A `legRate` fork of a wideband leg runs at 16 kHz both ways, as the engine's.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket, { WebSocketServer } from 'ws';
import type { Endpoint as FsEndpoint } from 'drachtio-fsmrf';
import { LITTLE_ENDIAN, pcm16ToSamples, Resampler, samplesToPcm16, type ForkOptions, type ForkStats, type InjectRate } from '../../../media-engine';
import { MediaBackendUnsupported } from '../port';
import { replyText } from './esl-arg';
import { LegSocketClosed } from './leg-socket';
import type { MediaFork } from '../tap';

/** The sub-protocol mod_audio_fork asks for. */
export const FORK_SUBPROTOCOL = 'audio.drachtio.org';

/** A fork's rate: 8 kHz, or a `legRate` fork of a wideband leg (the switch's read_rate above 8 kHz) 16 kHz, as the engine's. */
type ForkRate = 8000 | 16000;
/** Largest message taken from the switch (it sends 20 ms frames; a few buffered ones at most). */
const MAX_PAYLOAD = 256 * 1024;

export interface ForkTapSetting {
  /** where the server listens; the switch must reach it there (MEDIA_SERVER_TAP_LISTEN) */
  host: string;
  port: number;
  /** how long the switch may take to connect a fork after `uuid_audio_fork start` (MEDIA_SERVER_TAP_CONNECT_TIMEOUT_MS) */
  connectTimeoutMs: number;
}

/** Where a fork reports what it cannot throw (media-app's logger: the switch's fork it could not stop). */
export interface ForkLog {
  warn(obj: object, msg: string): void;
}

const NO_LOG: ForkLog = { warn: () => undefined };

/** A fork that could not start or whose connection failed: what happened, never the token. */
export class ForkTapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForkTapError';
  }
}

/** The leg a fork taps: its fsmrf Endpoint and its channel socket's guard (leg-socket.ts). */
export interface ForkLeg {
  readonly fs: FsEndpoint;
  run<T>(operation: string, op: () => Promise<T>): Promise<T>;
}

/** The switch's fork type for the engine's mix: stereo is the caller left, what the caller hears right. */
const MIX_TYPE = { in: 'mono', both: 'mixed', out: 'stereo' } as const;

let bugSeq = 0;

/**
 * What the server tells of its fork connections (the fork suite watches these, never its internals:
 * it ends a connection from the server's side and awaits each close):
 * 'connection' when a fork's connection is taken (the server's socket, and the upgrade request), 'closed'
 * when one of those has closed; `connections` is how many are open.
 */
export interface ForkTapEvents {
  connection: [ws: WebSocket, req: IncomingMessage];
  closed: [];
}

/** The server the switch's forks connect to: one per backend, listening from the first fork on. */
export class ForkTapServer extends EventEmitter<ForkTapEvents> {
  private wss: WebSocketServer | null = null;
  private listening: Promise<number> | null = null;
  /** the forks whose connection is awaited, by token */
  private readonly waiting = new Map<string, (ws: WebSocket) => void>();
  /** the same forks by leg (the switch's connect_failed names the leg only) */
  private readonly connecting = new WeakMap<FsEndpoint, Set<FsmrfFork>>();
  private closed = false;
  private open_ = 0;

  constructor(
    readonly setting: ForkTapSetting,
    /** where it reports what it cannot throw (the fork analysis's lost forks too) */
    readonly log: ForkLog = NO_LOG,
  ) {
    super();
  }

  /** The fork connections open now. */
  get connections(): number {
    return this.open_;
  }

  /** The port it listens on (starting it the first time). */
  port(): Promise<number> {
    if (this.closed) return Promise.reject(new ForkTapError('the audio fork server is closed'));
    this.listening ??= this.listen().catch((e: unknown) => {
      this.listening = null;
      throw e;
    });
    return this.listening;
  }

  private listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({
        host: this.setting.host,
        port: this.setting.port,
        maxPayload: MAX_PAYLOAD,
        perMessageDeflate: false,
        verifyClient: (info: { req: IncomingMessage }, cb: (ok: boolean, code?: number) => void) => cb(this.waiting.has(tokenOf(info.req)), 403),
        handleProtocols: (protocols: Set<string>) => (protocols.has(FORK_SUBPROTOCOL) ? FORK_SUBPROTOCOL : false),
      });
      // first: a failure to listen rejects; later ones (none expected) are no one's to throw
      wss.on('error', (e: Error) => {
        if (!this.wss) reject(new ForkTapError(`the audio fork server could not listen on ${this.setting.host}:${this.setting.port}: ${e.message}`));
      });
      wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
        ws.on('error', () => undefined);
        const token = tokenOf(req);
        const take = this.waiting.get(token);
        this.waiting.delete(token);
        if (!take) return ws.terminate(); // its fork gave up between the check and the upgrade
        this.open_++;
        ws.once('close', () => {
          this.open_--;
          this.emit('closed');
        });
        take(ws);
        this.emit('connection', ws, req);
      });
      wss.once('listening', () => {
        // closed while it started listening: it stops here, its port not left bound
        if (this.closed) {
          wss.close();
          reject(new ForkTapError('the audio fork server is closed'));
          return;
        }
        this.wss = wss;
        resolve((wss.address() as { port: number }).port);
      });
    });
  }

  /** Starts mod_audio_fork on `leg` towards this server; resolves once the switch connected. */
  async open(leg: ForkLeg, opts: ForkOptions): Promise<FsmrfFork> {
    if (!opts.onFrame && !opts.stream) throw new TypeError('forkAudioStart needs onFrame or stream');
    if (opts.reportStarts) throw new MediaBackendUnsupported('fsmrf', "reports of when injected audio starts (a fork's reportStarts)");
    const port = await this.port();
    const rate = opts.legRate ? await legRate(leg) : 8000;
    const token = randomBytes(18).toString('base64url');
    const mix = opts.mix ?? 'both';
    const fork = new FsmrfFork(leg, opts, `tap${++bugSeq}`, mix, rate, this.log);
    const { connected, done } = this.awaitConnection(leg, fork, token, port);
    try {
      const url = `ws://${hostForUrl(this.setting.host)}:${port}/fork/${token}`;
      // fsmrf rejects with the switch's reply as it came (its `-ERR …`, network input): flattened here
      const start = () =>
        leg.fs
          .forkAudioStart({ wsUrl: url, mixType: MIX_TYPE[mix], sampling: SAMPLING[rate], bugname: fork.bug, bidirectionalAudio: { enabled: 'true', streaming: 'true', sampleRate: String(rate) } })
          .catch((e: unknown) => {
            throw new ForkTapError(`uuid_audio_fork start: ${replyText(e instanceof Error ? e.message : String(e))}`);
          });
      await leg.run('forkAudioStart', start);
      await connected;
      return fork;
    } catch (e) {
      await fork.stop();
      throw e;
    } finally {
      done();
    }
  }

  /**
   * The fork's connection: resolves when the switch connects with `token`. Rejects at the deadline
   * (`connectTimeoutMs`, the token dead from then on), or at once on the switch's
   * `mod_audio_fork::connect_failed` on the leg while this is the leg's only fork awaiting its connection:
   * the event names no bug (mod_audio_fork's responseHandler), so with two awaiting whose it is cannot be
   * told and each waits out its deadline. `done` clears the timer, the token and the listener.
   */
  private awaitConnection(leg: ForkLeg, fork: FsmrfFork, token: string, port: number): { connected: Promise<void>; done: () => void } {
    let timer: NodeJS.Timeout | undefined;
    let fail: (e: Error) => void = () => undefined;
    const awaiting = this.connecting.get(leg.fs) ?? new Set<FsmrfFork>();
    this.connecting.set(leg.fs, awaiting);
    const connected = new Promise<void>((resolve, reject) => {
      fail = (e) => {
        this.waiting.delete(token); // dead from now on, not only once the switch's fork is stopped
        reject(e);
      };
      this.waiting.set(token, (ws) => {
        fork.attach(ws);
        resolve();
      });
      const ms = this.setting.connectTimeoutMs;
      timer = setTimeout(() => fail(new ForkTapError(`the switch did not connect the audio fork within ${ms} ms (can it reach ${this.setting.host}:${port}?)`)), ms);
    });
    connected.catch(() => undefined); // awaited by open; a failure while the start is still asked must not go unhandled
    const onFailed = (body: unknown) => {
      if (awaiting.size === 1 && awaiting.has(fork)) fail(new ForkTapError(`the switch could not connect the audio fork: ${replyText(reasonOf(body))}`));
    };
    awaiting.add(fork);
    // before the start is asked: the subscription goes out first on the channel's socket
    leg.fs.addCustomEventListener(CONNECT_FAILED, onFailed);
    const done = () => {
      clearTimeout(timer);
      this.waiting.delete(token);
      awaiting.delete(fork);
      leg.fs.removeCustomEventListener(CONNECT_FAILED, onFailed);
    };
    return { connected, done };
  }

  /** Stops listening; the forks' connections end (each fork's `ended`). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.clear();
    const wss = this.wss;
    if (!wss) return;
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
  }
}

/** mod_audio_fork's event when its WebSocket connect fails (body `{"reason": …}`). */
const CONNECT_FAILED = 'mod_audio_fork::connect_failed';

/** The reason in a connect_failed body as fsmrf hands it (JSON-parsed when it parsed, else the text). */
function reasonOf(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { reason?: unknown }).reason === 'string') return (body as { reason: string }).reason;
  return typeof body === 'string' && body ? body : 'no reason given';
}

/** mod_audio_fork's sampling argument for a rate (its README: `8k` or `16k`). */
const SAMPLING = { 8000: '8k', 16000: '16k' } as const;

/**
 * The rate of a `legRate` fork of `leg`: 16 kHz when the switch reads the leg above 8 kHz (`read_rate`:
 * 16000 on G.722, 48000 on Opus), else 8 kHz (a G.711 leg; `_undef_`: no media negotiated yet), as the
 * engine's legRate fork. A reply that is not a rate is the switch's refusal, an error.
 */
async function legRate(leg: ForkLeg): Promise<ForkRate> {
  const r = await leg.run('forkAudioStart', () => leg.fs.api('uuid_getvar', `${leg.fs.uuid} read_rate`));
  const body = r.getBody().trim();
  if (body === '_undef_') return 8000;
  if (!/^\d+$/.test(body)) throw new ForkTapError(`uuid_getvar read_rate: the switch answered ${replyText(body)}`);
  return Number(body) > 8000 ? 16000 : 8000;
}

/** One fork of a leg: the switch's bug `bug`, its frames from the socket, injected audio back on it. */
export class FsmrfFork implements MediaFork {
  readonly ended: Promise<string>;
  private endWith: (why: string) => void = () => undefined;
  private ws: WebSocket | null = null;
  private over = false;
  /** the start of a frame cut across messages: its first `restLen` bytes */
  private readonly rest: Buffer;
  private restLen = 0;
  /** why the connection failed (its 'error'), for `ended` */
  private failure = '';
  private readonly frameBytes: number;
  private readonly frameSamples: number;
  /** injected audio at the other rate than the fork's, brought to it (made on the first such injection, closed at the end) */
  private resampler: Resampler | null = null;
  private readonly stats: ForkStats = { sent: 0, dropped: 0, injected: 0 };
  /** onFrame calls whose promise has not settled: past maxInFlight a frame is dropped and counted, as the engine does */
  private inFlight = 0;
  private readonly maxInFlight: number;
  /** the stream asked to wait ('drain'): frames meanwhile are dropped and counted */
  private draining = false;

  constructor(
    private readonly leg: ForkLeg,
    private readonly opts: ForkOptions,
    readonly bug: string,
    private readonly mix: 'in' | 'out' | 'both',
    /** the frames' rate both ways (320 samples a frame at 16 kHz), fixed for the fork's life */
    readonly rate: ForkRate = 8000,
    private readonly log: ForkLog = NO_LOG,
  ) {
    this.frameSamples = rate / 50;
    this.frameBytes = this.frameSamples * 2 * (mix === 'out' ? 2 : 1);
    this.rest = Buffer.alloc(this.frameBytes);
    this.maxInFlight = opts.maxInFlight ?? 50;
    this.ended = new Promise((resolve) => (this.endWith = resolve));
  }

  /**
   * The switch's connection for this fork (the server handled its 'error' already). Binary audio only:
   * a text message ends the fork (1003), as does a message over the server's maxPayload (ws: 1009).
   */
  attach(ws: WebSocket): void {
    this.ws = ws;
    ws.on('error', (e: Error) => (this.failure ||= (e as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? `a message over ${MAX_PAYLOAD} bytes (closed with 1009)` : e.message));
    ws.on('message', (data: WebSocket.RawData, binary: boolean) => {
      if (!binary) return this.refuse('the switch sent a text message on the audio fork (it sends binary audio only)', 1003);
      // ws gives a message as one Buffer of its own (binaryType nodebuffer): read in place, never copied
      this.onAudio(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));
    });
    ws.once('close', (code: number) => this.lost(this.failure ? `the switch's audio fork connection failed: ${this.failure}` : `the switch's audio fork connection closed (code ${code})`));
    if (this.over) ws.close(1000);
  }

  /** Cuts the message into frames: views of it, and a frame across messages completed in `rest`. */
  private onAudio(buf: Buffer): void {
    if (this.over) return;
    const size = this.frameBytes;
    let at = 0;
    if (this.restLen) {
      at = Math.min(size - this.restLen, buf.length);
      buf.copy(this.rest, this.restLen, 0, at);
      this.restLen += at;
      if (this.restLen < size) return;
      this.restLen = 0;
      this.deliver(this.rest);
    }
    for (; at + size <= buf.length && !this.over; at += size) this.deliver(buf.subarray(at, at + size));
    if (!this.over) this.restLen = buf.copy(this.rest, 0, at);
  }

  /**
   * One 20 ms frame (stereo: the right channel, what the caller hears), read from `bytes` (not kept: it may
   * be `rest`). A frame its consumer has no room for is counted dropped before anything is read or made.
   */
  private deliver(bytes: Buffer): void {
    const stream = this.opts.stream;
    if (stream ? this.draining : this.inFlight >= this.maxInFlight) {
      this.stats.dropped++;
      return;
    }
    const frame = this.frameOf(bytes);
    this.stats.sent++;
    if (stream) {
      if (!stream.write(Buffer.from(frame.buffer))) {
        this.draining = true;
        stream.once('drain', () => (this.draining = false));
      }
      return;
    }
    try {
      const r = this.opts.onFrame!(frame);
      if (r) {
        this.inFlight++;
        // the consumer's failure is its own: its frame is done either way
        const done = (): void => void this.inFlight--;
        r.then(done, done);
      }
    } catch {
      // the consumer's failure is its own: the next frame still comes
    }
  }

  /** The frame's samples (stereo: the right channel) as a new array: the consumer may keep it. */
  private frameOf(bytes: Buffer): Int16Array {
    if (this.mix !== 'out') return pcm16ToSamples(bytes);
    const n = this.frameSamples;
    const frame = new Int16Array(n);
    if (LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
      const both = new Int16Array(bytes.buffer, bytes.byteOffset, n * 2);
      for (let i = 0; i < n; i++) frame[i] = both[2 * i + 1]!;
    } else for (let i = 0; i < n; i++) frame[i] = bytes.readInt16LE(i * 4 + 2);
    return frame;
  }

  /**
   * Audio back into the call at the fork's rate (the switch streams it back at that rate). A 16 kHz fork
   * takes 8 kHz audio too (the default rate), resampled up; an 8 kHz fork refuses 16 kHz audio by name.
   */
  inject(samples: Int16Array, rate: InjectRate = 8000): void {
    if (rate !== 8000 && rate !== 16000) throw new TypeError(`inject: rate must be 8000 or 16000, not ${String(rate)}`);
    if (rate > this.rate) throw new MediaBackendUnsupported('fsmrf', 'injecting 16 kHz audio into an 8 kHz fork (the fork streams back at 8 kHz)');
    const ws = this.ws;
    if (this.over || !ws || ws.readyState !== WebSocket.OPEN || samples.length === 0) return;
    const pcm = rate === this.rate ? samples : this.upsample(samples);
    // the resampler's output is the fork's own, sent as it is; the caller's samples may be reused (one beep into every fork): one copy
    ws.send(pcm === samples ? Buffer.from(samplesToPcm16(pcm)) : samplesToPcm16(pcm), { binary: true });
    this.stats.injected += Math.ceil(pcm.length / this.frameSamples);
  }

  /** 8 kHz audio at the fork's 16 kHz: one resampler for the fork's life, so chunk edges stay continuous. */
  private upsample(samples: Int16Array): Int16Array {
    this.resampler ??= new Resampler(8000, this.rate);
    const out = new Int16Array(this.resampler.outputLength(samples.length));
    return out.subarray(0, this.resampler.process(samples, out));
  }

  /** `stop_play`: the switch drops the fork's audio not played yet. */
  async clearInjected(): Promise<void> {
    if (this.over) return;
    const r = await this.leg.run('clearInjected', () => this.leg.fs.api('uuid_audio_fork', `${this.leg.fs.uuid} stop_play ${this.bug}`));
    const body = r.getBody();
    if (!body.startsWith('+OK')) throw new ForkTapError(`stop_play: the switch answered ${replyText(body)}`);
  }

  nextStart(): Promise<number | null> {
    throw new TypeError('nextStart: the fork was started without reportStarts');
  }

  /** Ends the switch's fork, then the connection; the counters, or null when it had ended already. */
  async stop(): Promise<ForkStats | null> {
    if (this.over) return null;
    this.over = true;
    this.release();
    this.endWith('stopped');
    await this.stopOnSwitch();
    this.ws?.close(1000);
    return { ...this.stats };
  }

  /**
   * The fork ended from the switch's side (its connection dropped, or what it sent was refused): the
   * switch's bug is stopped too, once, or mod_audio_fork keeps it on the channel (and reconnects nothing).
   */
  private lost(why: string): void {
    if (this.over) return;
    this.over = true;
    this.release();
    this.endWith(why);
    void this.stopOnSwitch();
  }

  /**
   * `uuid_audio_fork <uuid> stop <bug>`, bounded by the leg's channel socket (leg-socket.ts: its end
   * rejects). A channel already gone took its bug with it, and mod_audio_fork's `-ERR Operation Failed`
   * says the channel or the bug is not there (ended with its connection, or its channel hung up): the
   * end wanted. Any other failure is logged, never thrown.
   */
  private async stopOnSwitch(): Promise<void> {
    try {
      await this.leg.run('forkAudioStop', () => this.leg.fs.forkAudioStop(this.bug));
    } catch (e) {
      if (e instanceof LegSocketClosed || (e instanceof Error && e.message.startsWith('-ERR Operation Failed'))) return;
      this.log.warn({ bug: this.bug, err: replyText(e instanceof Error ? e.message : String(e)) }, "the switch's audio fork could not be stopped");
    }
  }

  private release(): void {
    this.resampler?.close();
    this.resampler = null;
  }

  /** What the switch sent is not this fork's audio: the fork ends with `why`, the connection with `code`. */
  private refuse(why: string, code: number): void {
    if (this.over) return;
    this.lost(why);
    this.ws?.close(code);
  }
}

/** The token in a fork connection's path (`/fork/<token>`), '' when there is none. */
function tokenOf(req: IncomingMessage): string {
  const m = /^\/fork\/([A-Za-z0-9_-]{16,64})$/.exec((req.url ?? '').split('?')[0]!);
  return m?.[1] ?? '';
}

/** An IPv6 literal is bracketed in a URL. */
function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
