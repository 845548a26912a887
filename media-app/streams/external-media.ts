/**
 * External media (flow actions external_media_start / external_media_stop): the node connects out
 * to the customer's WebSocket URL and streams the call exactly as a media_stream client would get
 * it (same encapsulations, both parties mixed), playing what the customer sends back into the call.
 * One external media per call; it ends with the call, on external_media_stop, or when the
 * customer's server closes. The URL goes through the egress policy: its host is resolved and checked
 * and the socket is pinned to the checked address; what the server answered is logged, never put in
 * the error a flow sees.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { EgressRefused } from '../../core/net';
import type { Logger } from 'pino';
import type { Encapsulation } from '../../core/streams/encapsulation';
import { ExternalMediaError, externalMediaProblem } from '../../core/streams/external-media-options';
import { CLOSE_NORMAL, StreamSocket } from '../../core/streams/stream-socket';
import type { StreamState } from '../../core/streams/state';
import type { CallDeps } from '../call/deps';
import { openCallTap, type AudioTap } from './taps';
import { TwilioStream, TwilioStreamError, type TwilioStreamRequest } from './twilio-stream';

declare module '../flow/services' {
  interface FlowServices {
    externalMedia?: ExternalMediaService;
  }
}

export interface ExternalMediaRequest {
  callId: string;
  url: string;
  encapsulation: Encapsulation;
}

export interface ExternalMedia {
  id: string;
  callId: string;
  url: string;
  encapsulation: Encapsulation;
  readonly state: StreamState;
}

/** The one reason a flow is told when the connection did not come up (the detail is logged). */
const CONNECT_FAILED = 'the external media URL could not be connected to';

interface Running extends ExternalMedia {
  socket: StreamSocket;
  tap: AudioTap | null;
}

/** Twilio's limits per call: four streams, one of them bidirectional. */
export const MAX_TWILIO_STREAMS = 4;

export class ExternalMediaService extends EventEmitter {
  private readonly byCall = new Map<string, Running>();
  private readonly twilio = new Map<string, TwilioStream[]>();

  constructor(
    private readonly deps: Pick<CallDeps, 'calls' | 'media' | 'egress' | 'db' | 'config'>,
    private readonly logger: Logger,
    private readonly connectTimeoutMs = 5000,
  ) {
    super();
  }

  get(callId: string): ExternalMedia | undefined {
    return this.byCall.get(callId);
  }

  /** Connects to the customer's server and starts streaming; rejects when it cannot. */
  async start(req: ExternalMediaRequest): Promise<ExternalMedia> {
    const problem = externalMediaProblem(req.url, req.encapsulation);
    if (problem) throw new ExternalMediaError(problem);
    if (this.byCall.has(req.callId)) throw new ExternalMediaError('an external media is already running on this call');
    let checked;
    try {
      checked = await this.deps.egress.checkDestination(new URL(req.url).hostname);
    } catch (e) {
      if (e instanceof EgressRefused) throw new ExternalMediaError(`url refused: ${e.message}`);
      throw e;
    }
    if (this.byCall.has(req.callId)) throw new ExternalMediaError('an external media is already running on this call');
    const ws = new WebSocket(req.url, { handshakeTimeout: this.connectTimeoutMs, maxPayload: 64 * 1024, lookup: checked.lookup, followRedirects: false });
    const socket = new StreamSocket(ws, { encapsulation: req.encapsulation, streamId: req.callId });
    const id = randomUUID();
    const run: Running = {
      id,
      callId: req.callId,
      url: req.url,
      encapsulation: req.encapsulation,
      socket,
      tap: null,
      get state() {
        return socket.state;
      },
    };
    this.byCall.set(req.callId, run);
    socket.on('closed', () => {
      if (this.byCall.get(req.callId) === run) this.byCall.delete(req.callId);
      void run.tap?.stop();
      this.emit('closed', run);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('closed', (c: { code: number; reason: string }) => {
          this.logger.info({ call: req.callId, url: req.url, code: c.code, reason: c.reason }, 'external media could not connect');
          reject(new ExternalMediaError(CONNECT_FAILED));
        });
        ws.once('unexpected-response', (_r, res) => {
          this.logger.info({ call: req.callId, url: req.url, status: res.statusCode }, 'external media server answered without a WebSocket upgrade');
          reject(new ExternalMediaError(CONNECT_FAILED));
        });
      });
      run.tap = await openCallTap(this.deps, req.callId, (pcm) => socket.send(pcm));
    } catch (e) {
      socket.close(CLOSE_NORMAL, 'could not start');
      ws.terminate();
      if (this.byCall.get(req.callId) === run) this.byCall.delete(req.callId);
      throw e instanceof ExternalMediaError ? e : new ExternalMediaError(e instanceof Error ? e.message : String(e));
    }
    const tap = run.tap;
    socket.on('audio', (pcm: Buffer) => tap.inject(pcm));
    void tap.ended.then((why) => socket.close(CLOSE_NORMAL, why));
    this.logger.info({ call: req.callId, url: req.url, encapsulation: req.encapsulation }, 'external media started');
    return run;
  }

  /** The call's Twilio streams that run. */
  twilioStreams(callId: string): readonly TwilioStream[] {
    return this.twilio.get(callId) ?? [];
  }

  /** Starts a Twilio Media Stream (encapsulation twilio); rejects when it cannot. */
  async startTwilio(req: TwilioStreamRequest): Promise<TwilioStream> {
    const problem = externalMediaProblem(req.url, 'twilio');
    if (problem) throw new ExternalMediaError(problem);
    const running = this.twilioStreams(req.callId);
    if (running.length >= MAX_TWILIO_STREAMS) throw new ExternalMediaError(`a call runs at most ${MAX_TWILIO_STREAMS} twilio streams`);
    if (req.bidirectional && running.some((s) => s.req.bidirectional)) throw new ExternalMediaError('a bidirectional twilio stream is already running on this call');
    if (req.name && running.some((s) => s.name === req.name)) throw new ExternalMediaError(`a twilio stream named ${JSON.stringify(req.name)} is already running on this call`);
    const stream = new TwilioStream(this.deps, this.logger, req);
    this.twilio.set(req.callId, [...running, stream]);
    stream.once('closed', () => {
      const left = this.twilioStreams(req.callId).filter((s) => s !== stream);
      if (left.length) this.twilio.set(req.callId, left);
      else this.twilio.delete(req.callId);
      this.emit('closed', stream);
    });
    try {
      await stream.start();
    } catch (e) {
      throw e instanceof TwilioStreamError ? new ExternalMediaError(e.message) : e;
    }
    this.logger.info({ call: req.callId, url: req.url, stream: stream.streamSid, bidirectional: req.bidirectional }, 'twilio stream started');
    return stream;
  }

  /** Stops the call's external media and Twilio streams, or only the Twilio stream `name`; false when none was running. */
  async stop(callId: string, name?: string): Promise<boolean> {
    const streams = this.twilioStreams(callId).filter((s) => name === undefined || s.name === name);
    for (const s of streams) s.stop('external_media_stop');
    const run = name === undefined ? this.byCall.get(callId) : undefined;
    if (!run) return streams.length > 0;
    this.byCall.delete(callId);
    run.socket.close(CLOSE_NORMAL, 'external_media_stop');
    await run.tap?.stop();
    return true;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...new Set([...this.byCall.keys(), ...this.twilio.keys()])].map((c) => this.stop(c)));
  }
}
