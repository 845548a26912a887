/**
 * One Twilio Media Stream of a call (encapsulation `twilio`): the node dials the customer's URL,
 * sends `connected` and `start`, then one `media` message per 20 ms chunk of each track it carries
 * ('in' fork = inbound: what the caller says; 'out' fork = outbound: what the caller hears), `dtmf`
 * for the caller's digits, and `stop` before it closes. A bidirectional stream (`<Connect>`) also
 * plays what the server sends (core/streams/twilio-playback.ts), ticked by the call's clock (the
 * inbound fork's frames); `clear` also empties what the media worker holds. Malformed server messages are logged and ignored (the stream stays up), as on Twilio.
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
import { TwilioPlayback } from '../../core/streams/twilio-playback';
import { parseServerMessage, tracksOf, TwilioMessages, type TwilioMediaTrack, type TwilioTrack } from '../../core/streams/twilio';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import type { MediaFork } from '../media-server/tap';
import type { CallDeps } from '../call/deps';
import type { CallSession } from '../call/session';
import { StreamStatusCallback, streamAuthToken, type StatusCallbackTarget } from './twilio-callback';
import { twilioSignature } from '../../core/twilio/signature';
import { traceFork, type MediaSpan } from '../kit/media-trace';

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

/** Every message is a text frame, bytes included. */
const TEXT = { binary: false } as const;

/** Unsent bytes above which media messages are dropped (a slow server never delays the call). */
const MAX_BUFFERED = 256 * 1024;

export class TwilioStream extends EventEmitter {
  readonly id = randomUUID();
  readonly streamSid = toSid('MZ', this.id);
  readonly name: string;
  private readonly machine = new StreamStateMachine();
  private readonly msgs: TwilioMessages;
  private ws: WebSocket | null = null;
  private readonly forks: MediaFork[] = [];
  /** the stream's `media fork` span (kit/media-trace.ts), ended with the teardown */
  private forkSpan: MediaSpan | null = null;
  private readonly playback = new TwilioPlayback({
    // the fork copies what it is given at once: a view of the frame when it is aligned
    play: (pcm) =>
      this.forks[0]?.inject(pcm.byteOffset % 2 === 0 ? new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1) : new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length))),
    mark: (name) => this.send(this.msgs.mark(name)),
    flush: () => void this.forks[0]?.clearInjected().catch(() => undefined),
  });
  /** per track: the media time (ms) of its next frame; the clock track's, for a track that joins */
  private readonly mediaMs = new Map<TwilioMediaTrack, number>();
  private clockMs = 0;
  private readonly callback: StreamStatusCallback | null;
  private call: CallSession | null = null;
  readonly stats = { sent: 0, dropped: 0, ignored: 0 };
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
    // signed as Twilio signs it (and as <ConversationRelay>'s socket is): X-Twilio-Signature, HMAC-SHA1
    // of the wss URL as given, keyed by the account's AuthToken, so the app can tell the platform's
    // connection from anyone's
    const token = await streamAuthToken(this.deps, this.req.customerId);
    if (token === null) throw new TwilioStreamError("the account's AuthToken could not be read: the customer is gone");
    // no permessage-deflate (as Twilio): a zlib pass over every 20 ms frame would cost more than the bytes it saves
    const ws = new WebSocket(this.req.url, {
      handshakeTimeout: this.connectTimeoutMs,
      maxPayload: 1024 * 1024,
      lookup: checked.lookup,
      followRedirects: false,
      perMessageDeflate: false,
      headers: { 'X-Twilio-Signature': twilioSignature(token, this.req.url) },
    });
    this.ws = ws;
    ws.on('error', () => undefined); // 'close' follows
    await new Promise<void>((resolve, reject) => {
      const notConnected = (code: number) => {
        this.logger.info({ call: this.req.callId, url: this.req.url, code }, 'twilio stream could not connect');
        reject(new TwilioStreamError('the stream URL could not be connected to'));
      };
      ws.once('open', () => {
        ws.off('close', notConnected);
        resolve();
      });
      ws.once('close', notConnected);
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
    const span = (this.forkSpan = traceFork('call', call.id, tracks.join('+')));
    for (const [i, track] of tracks.entries()) {
      // the first fork's frames are the stream's clock: one per 20 ms tick of the call
      const fork = await ep.forkAudioStart({ mix: track === 'inbound' ? 'in' : 'out', onFrame: (f) => this.onFrame(track, f, i === 0) }).catch((err: unknown) => {
        span.fail(err);
        throw err;
      });
      if (this.machine.state !== 'streaming') {
        await fork.stop();
        throw new TwilioStreamError('the stream closed while starting');
      }
      this.forks.push(fork);
      // a fork over a connection of its own (the fsmrf backend's) may end by itself: the stream ends with it
      void fork.ended?.then((why) => why !== 'stopped' && this.stop(`media fork ended: ${why}`));
    }
    if (this.req.bidirectional) call.on('dtmf', this.onDtmf);
    ep.once('destroy', this.onCallGone);
    void call.done.then(this.onCallGone);
  }

  private readonly onDtmf = (digit: string): void => {
    if (this.machine.state === 'streaming') this.send(this.msgs.dtmf(digit));
  };

  private readonly onCallGone = (): void => this.stop('call ended');

  /** Sends a text message (a `media` message as its bytes: see TwilioMessages.mediaBytes). */
  private send(text: string | Buffer): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== ws.OPEN) return false;
    ws.send(text, TEXT);
    return true;
  }

  private onFrame(track: TwilioMediaTrack, frame: Int16Array, clock: boolean): void {
    if (this.machine.state !== 'streaming') return;
    if (clock && this.req.bidirectional) this.playback.tick();
    // media time, as Twilio's timestamp is: 20 ms a chunk from the stream's start (a track joins at the
    // clock's time), never the time of delivery; clients fill any gap between timestamps with silence
    const at = this.mediaMs.get(track) ?? this.clockMs;
    this.mediaMs.set(track, at + frame.length / 8);
    if (clock) this.clockMs = at + frame.length / 8;
    const ws = this.ws!;
    if (ws.bufferedAmount > MAX_BUFFERED) {
      this.stats.dropped++;
      return;
    }
    this.send(this.msgs.mediaBytes(track, at, frame));
    this.stats.sent++;
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.machine.state !== 'streaming') return;
    if (isBinary) return this.ignore('a binary frame');
    const text = Array.isArray(data) ? Buffer.concat(data).toString() : Buffer.isBuffer(data) ? data.toString() : Buffer.from(data).toString();
    const m = parseServerMessage(text, this.streamSid);
    if (m.kind === 'ignored') return this.ignore(m.why);
    if (m.kind === 'clear') this.playback.clear();
    else if (m.kind === 'mark') this.playback.mark(m.name);
    else this.playback.media(m.pcm);
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
    this.forkSpan?.end(why);
    this.playback.reset();
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
