/**
 * One Twilio Media Stream of a call (encapsulation `twilio`): the node dials the customer's URL,
 * sends `connected` and `start`, then one `media` message per 20 ms chunk of each track it carries
 * ('in' fork = inbound: what the caller says; 'out' fork = outbound: what the caller hears), `dtmf`
 * for the caller's digits, and `stop` before it closes. A bidirectional stream (`<Connect>`) also
 * plays what the server sends: `media` payloads queue in order and leave the queue one 20 ms frame
 * per tick of the call's clock (the inbound fork's frames), so the queue is ours and `clear` can empty
 * it at once; a `mark` is echoed when the audio queued before it has been handed to the call (or on
 * `clear`). Malformed server messages are logged and ignored (the stream stays up), as on Twilio.
 *
 * Events: 'closed' (why).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import WebSocket, { type RawData } from 'ws';
import { EgressRefused } from '../../core/net';
import { StreamStateMachine, type StreamState } from '../../core/streams/state';
import { CLOSE_NORMAL } from '../../core/streams/stream-socket';
import { parseServerMessage, tracksOf, TwilioMessages, type TwilioMediaTrack, type TwilioTrack } from '../../core/streams/twilio';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import type { AudioFork } from '../../media-engine';
import type { CallDeps } from '../call/deps';
import type { CallSession } from '../call/session';
import { StreamStatusCallback, type StatusCallbackTarget } from './twilio-callback';

export interface TwilioStreamRequest {
  callId: string;
  customerId: string;
  url: string;
  /** Twilio's StreamName; the StreamSid when none was given. */
  name?: string;
  track: TwilioTrack;
  /** `<Connect><Stream>`: the server's media is played (inbound track only). */
  bidirectional: boolean;
  parameters: Record<string, string>;
  statusCallback?: StatusCallbackTarget;
}

export class TwilioStreamError extends Error {}

/** Unsent bytes above which media messages are dropped (a slow server never delays the call). */
const MAX_BUFFERED = 256 * 1024;
/** Audio a server may queue ahead: a minute (then the oldest goes, as for the other encapsulations). */
const MAX_QUEUED_BYTES = 8000 * 2 * 60;
const FRAME = 320;
/** Frames kept queued in the media worker ahead of its clock (jitter of this thread it rides out). */
const LEAD = 3;

type Queued = { pcm: Buffer } | { mark: string };

export class TwilioStream extends EventEmitter {
  readonly id = randomUUID();
  readonly streamSid = toSid('MZ', this.id);
  readonly name: string;
  private readonly machine = new StreamStateMachine();
  private readonly msgs: TwilioMessages;
  private ws: WebSocket | null = null;
  private readonly forks: AudioFork[] = [];
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  /** Frames handed to the worker and not yet played (an estimate: one leaves per tick). */
  private ahead = 0;
  private readonly marksDue: { name: string; ticks: number }[] = [];
  private t0 = 0;
  private readonly callback: StreamStatusCallback | null;
  private call: CallSession | null = null;
  readonly stats = { sent: 0, dropped: 0, played: 0, ignored: 0 };
  /** Resolves with why the stream ended. */
  readonly done: Promise<string>;
  private finish: (why: string) => void = () => undefined;

  constructor(
    private readonly deps: Pick<CallDeps, 'calls' | 'egress' | 'db' | 'config'>,
    private readonly logger: Logger,
    readonly req: TwilioStreamRequest,
    private readonly connectTimeoutMs = 5000,
  ) {
    super();
    this.name = req.name ?? this.streamSid;
    const ids = { streamSid: this.streamSid, accountSid: accountSid(req.customerId), callSid: callSid(req.callId) };
    this.msgs = new TwilioMessages(ids);
    this.callback = req.statusCallback ? new StreamStatusCallback(deps, logger, req.statusCallback, { ...ids, customerId: req.customerId, streamName: this.name }) : null;
    this.done = new Promise((r) => (this.finish = r));
  }

  get state(): StreamState {
    return this.machine.state;
  }

  /** Connects and starts streaming; rejects (after the stream-error callback) when it cannot. */
  async start(): Promise<void> {
    try {
      await this.connect();
      await this.openMedia();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.teardown('could not start');
      void this.callback?.send('stream-error', why);
      throw e instanceof TwilioStreamError ? e : new TwilioStreamError(why);
    }
    void this.callback?.send('stream-started');
  }

  private async connect(): Promise<void> {
    let checked;
    try {
      checked = await this.deps.egress.checkDestination(new URL(this.req.url).hostname);
    } catch (e) {
      if (e instanceof EgressRefused) throw new TwilioStreamError(`url refused: ${e.message}`);
      throw e;
    }
    const ws = new WebSocket(this.req.url, { handshakeTimeout: this.connectTimeoutMs, maxPayload: 1024 * 1024, lookup: checked.lookup, followRedirects: false });
    this.ws = ws;
    ws.on('error', () => undefined); // 'close' follows
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('close', (code: number) => {
        this.logger.info({ call: this.req.callId, url: this.req.url, code }, 'twilio stream could not connect');
        reject(new TwilioStreamError('the stream URL could not be connected to'));
      });
      ws.once('unexpected-response', (_r, res) => {
        this.logger.info({ call: this.req.callId, url: this.req.url, status: res.statusCode }, 'twilio stream server answered without a WebSocket upgrade');
        ws.terminate();
        reject(new TwilioStreamError('the stream URL could not be connected to'));
      });
    });
    this.machine.to('open');
    ws.on('close', (code: number) => this.onServerClosed(code));
    if (this.req.bidirectional) ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
  }

  private async openMedia(): Promise<void> {
    const call = this.deps.calls.get(this.req.callId) as CallSession | undefined;
    const ep = call?.endpoint;
    if (!call || call.isEnded || !ep || ep.destroyed) throw new TwilioStreamError('the call is not live on this node');
    this.call = call;
    const tracks = this.req.bidirectional ? (['inbound'] as TwilioMediaTrack[]) : tracksOf(this.req.track);
    this.send(this.msgs.connected());
    this.send(this.msgs.start(tracks, this.req.parameters));
    this.machine.to('streaming');
    this.t0 = performance.now();
    for (const [i, track] of tracks.entries()) {
      // the first fork's frames are the stream's clock: one per 20 ms tick of the call
      const fork = await ep.forkAudioStart({ mix: track === 'inbound' ? 'in' : 'out', onFrame: (f) => this.onFrame(track, f, i === 0) });
      if (this.machine.state !== 'streaming') {
        await fork.stop();
        throw new TwilioStreamError('the stream closed while starting');
      }
      this.forks.push(fork);
    }
    if (this.req.bidirectional) call.on('dtmf', this.onDtmf);
    ep.once('destroy', this.onCallGone);
    void call.done.then(this.onCallGone);
  }

  private readonly onDtmf = (digit: string): void => {
    if (this.machine.state === 'streaming') this.send(this.msgs.dtmf(digit));
  };

  private readonly onCallGone = (): void => this.stop('call ended');

  private send(text: string): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== ws.OPEN) return false;
    ws.send(text);
    return true;
  }

  private onFrame(track: TwilioMediaTrack, frame: Int16Array, clock: boolean): void {
    if (this.machine.state !== 'streaming') return;
    if (clock && this.req.bidirectional) this.playTick();
    const ws = this.ws!;
    if (ws.bufferedAmount > MAX_BUFFERED) {
      this.stats.dropped++;
      return;
    }
    this.send(this.msgs.media(track, performance.now() - this.t0, Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength)));
    this.stats.sent++;
  }

  /**
   * One tick of playback: hands queued audio to the call, keeping LEAD frames ahead in the worker so
   * a late tick of this thread leaves no gap (`clear` empties the worker's queue too), and echoes
   * each mark once the audio before it has been played (handed over, plus what the worker still holds).
   */
  private playTick(): void {
    if (this.ahead > 0) this.ahead--;
    for (const m of this.marksDue) m.ticks--;
    while (this.marksDue.length && this.marksDue[0]!.ticks <= 0) this.send(this.msgs.mark(this.marksDue.shift()!.name));
    this.topUp();
  }

  private topUp(): void {
    const want = this.ahead < LEAD ? LEAD - this.ahead : 0;
    for (let i = 0; i < want && this.takeFrame(); i++);
  }

  /** Moves the next 20 ms from the queue to the call (and the marks it reaches onto marksDue); false when the queue is empty. */
  private takeFrame(): boolean {
    this.markReached();
    if (!this.queuedBytes) return false;
    const out = Buffer.alloc(FRAME);
    let n = 0;
    while (n < FRAME && this.queue.length) {
      const head = this.queue[0]!;
      if ('mark' in head) break; // a mark waits until the audio before it has gone out
      const take = Math.min(FRAME - n, head.pcm.length);
      head.pcm.copy(out, n, 0, take);
      n += take;
      this.queuedBytes -= take;
      if (take === head.pcm.length) this.queue.shift();
      else head.pcm = head.pcm.subarray(take);
    }
    this.forks[0]?.inject(new Int16Array(out.buffer, out.byteOffset, n >> 1).slice());
    this.ahead++;
    this.stats.played++;
    this.markReached();
    return true;
  }

  /** Marks at the head of the queue are due once the worker has played what it holds. */
  private markReached(): void {
    while (this.queue.length && 'mark' in this.queue[0]!) {
      const name = (this.queue.shift() as { mark: string }).mark;
      if (this.ahead > 0) this.marksDue.push({ name, ticks: this.ahead });
      else this.send(this.msgs.mark(name));
    }
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.machine.state !== 'streaming') return;
    if (isBinary) return this.ignore('a binary frame');
    const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.isBuffer(data) ? data.toString() : Buffer.from(data).toString();
    const m = parseServerMessage(text, this.streamSid);
    if (m.kind === 'ignored') return this.ignore(m.why);
    if (m.kind === 'clear') {
      for (const d of this.marksDue.splice(0)) this.send(this.msgs.mark(d.name));
      for (const q of this.queue) if ('mark' in q) this.send(this.msgs.mark(q.mark));
      this.queue.length = 0;
      this.queuedBytes = 0;
      // and what the worker holds ahead of its clock
      this.ahead = 0;
      void this.forks[0]?.clearInjected().catch(() => undefined);
      return;
    }
    if (m.kind === 'mark') {
      this.queue.push({ mark: m.name });
      if (!this.queuedBytes) this.markReached();
      return;
    }
    if (!m.pcm.length) return;
    this.queue.push({ pcm: m.pcm });
    this.queuedBytes += m.pcm.length;
    this.dropOldest();
    // nothing playing: start now rather than at the next tick
    if (this.ahead === 0) this.topUp();
  }

  private dropOldest(): void {
    while (this.queuedBytes > MAX_QUEUED_BYTES) {
      const i = this.queue.findIndex((q) => 'pcm' in q);
      const q = this.queue[i] as { pcm: Buffer };
      const cut = Math.min(q.pcm.length, this.queuedBytes - MAX_QUEUED_BYTES);
      this.queuedBytes -= cut;
      if (cut === q.pcm.length) this.queue.splice(i, 1);
      else q.pcm = q.pcm.subarray(cut);
    }
  }

  private ignore(why: string): void {
    this.stats.ignored++;
    // at most a line per stream and second of garbage
    if (this.stats.ignored === 1 || this.stats.ignored % 50 === 0)
      this.logger.info({ call: this.req.callId, stream: this.streamSid, why, ignored: this.stats.ignored }, 'twilio stream: server message ignored');
  }

  /** Sends `stop` and closes (external_media_stop, the hangup). Idempotent. */
  stop(why: string): void {
    if (this.machine.state === 'closing' || this.machine.state === 'closed') return;
    const wasStreaming = this.machine.state === 'streaming';
    if (wasStreaming) this.send(this.msgs.stop());
    this.teardown(why);
    if (wasStreaming) void this.callback?.send('stream-stopped');
  }

  private onServerClosed(code: number): void {
    if (this.machine.state === 'closing' || this.machine.state === 'closed') return;
    this.logger.info({ call: this.req.callId, stream: this.streamSid, code }, 'twilio stream closed by the server');
    const wasStreaming = this.machine.state === 'streaming';
    this.teardown('the server closed the stream');
    if (wasStreaming) void this.callback?.send('stream-stopped');
  }

  private teardown(why: string): void {
    if (!this.machine.to('closing')) return;
    this.call?.off('dtmf', this.onDtmf);
    this.call?.endpoint?.off('destroy', this.onCallGone);
    for (const f of this.forks.splice(0)) void f.stop();
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.marksDue.length = 0;
    const ws = this.ws;
    if (ws && ws.readyState === ws.OPEN) {
      ws.close(CLOSE_NORMAL, why.slice(0, 120));
      setTimeout(() => ws.terminate(), 1000).unref();
    } else ws?.terminate();
    this.machine.to('closed');
    this.finish(why);
    this.emit('closed', why);
  }
}
