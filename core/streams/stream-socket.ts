/**
 * One media stream over a WebSocket, in one encapsulation: 20 ms PCM chunks out (`send`), decoded
 * audio in ('audio' events), its state machine (state.ts), and backpressure by dropping: a chunk
 * is skipped while the socket holds more than `maxBufferedBytes` unsent, so a slow client never
 * delays the call's clock. Used on both sides: control-api toward a client that connected, and
 * media-app toward a customer's server (external media).
 *
 * Events: 'state' (StreamState), 'audio' (Buffer of PCM), 'hangup' (the peer sent AudioSocket 0x00),
 * 'dtmf' (digit), 'closed' ({ code, reason }).
 */
import { EventEmitter } from 'node:events';
import type { RawData, WebSocket } from 'ws';
import type { Encapsulation } from './encapsulation';
import { createDecoder, createEncoder, StreamProtocolError, type Decoder, type Encoder } from './framing';
import { StreamStateMachine, type StreamState } from './state';

export interface StreamSocketOptions {
  encapsulation: Encapsulation;
  /** The call or conference id (AudioSocket's UUID message). */
  streamId: string;
  /** Unsent bytes above which chunks are dropped (default 64 KiB, about 3 s of rtp chunks). */
  maxBufferedBytes?: number;
}

export interface StreamSocketStats {
  sent: number;
  dropped: number;
  received: number;
}

/** Close codes we use (RFC 6455 §7.4: 1000 normal, 1008 policy, 1011 server error; 4xxx private). */
export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL = 1002;
export const CLOSE_POLICY = 1008;
export const CLOSE_INTERNAL = 1011;

export class StreamSocket extends EventEmitter {
  private readonly machine = new StreamStateMachine();
  private readonly encoder: Encoder;
  private readonly decoder: Decoder;
  private readonly maxBuffered: number;
  private opened = false;
  readonly stats: StreamSocketStats = { sent: 0, dropped: 0, received: 0 };

  constructor(
    private readonly ws: WebSocket,
    private readonly opts: StreamSocketOptions,
  ) {
    super();
    this.encoder = createEncoder(opts.encapsulation, opts.streamId);
    this.decoder = createDecoder(opts.encapsulation);
    this.maxBuffered = opts.maxBufferedBytes ?? 64 * 1024;
    this.machine.on('state', (s: StreamState) => this.emit('state', s));
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('close', (code: number, reason: Buffer) => this.onClosed(code, reason.toString()));
    ws.on('error', () => undefined); // 'close' follows
    // a client socket is still connecting; an accepted server socket is open already
    if (ws.readyState === ws.OPEN) queueMicrotask(() => this.onOpen());
    else ws.once('open', () => this.onOpen());
  }

  get state(): StreamState {
    return this.machine.state;
  }

  get encapsulation(): Encapsulation {
    return this.opts.encapsulation;
  }

  private onOpen(): void {
    if (this.opened) return;
    this.opened = true;
    if (this.machine.to('open')) this.emit('open');
  }

  /** Sends one 20 ms chunk (320 bytes of PCM). */
  send(pcm: Buffer): void {
    if (this.machine.state !== 'open' && this.machine.state !== 'streaming') return;
    if (this.ws.bufferedAmount > this.maxBuffered) {
      this.stats.dropped++;
      return;
    }
    if (this.machine.state === 'open') {
      for (const m of this.encoder.opening()) this.ws.send(m, { binary: true });
      this.machine.to('streaming');
    }
    this.ws.send(this.encoder.frame(pcm), { binary: true });
    this.stats.sent++;
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.machine.state === 'closing' || this.machine.state === 'closed') return;
    if (!isBinary) return; // text messages carry nothing for a media stream
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    let items;
    try {
      items = this.decoder.push(buf);
    } catch (e) {
      const why = e instanceof StreamProtocolError ? e.message : 'malformed message';
      return this.close(CLOSE_PROTOCOL, why);
    }
    for (const it of items) {
      if (it.kind === 'audio') {
        if (it.pcm.length === 0) continue;
        this.stats.received++;
        // an odd trailing byte is not a sample
        this.emit('audio', it.pcm.length & 1 ? it.pcm.subarray(0, it.pcm.length - 1) : it.pcm);
      } else if (it.kind === 'hangup') {
        this.emit('hangup');
        return this.close(CLOSE_NORMAL, 'peer hung up');
      } else if (it.kind === 'dtmf') this.emit('dtmf', it.digit);
      else if (it.kind === 'error') this.emit('peerError', it.code);
    }
  }

  /** Ends the stream: AudioSocket peers get the hangup message first. Idempotent. */
  close(code = CLOSE_NORMAL, reason = ''): void {
    if (!this.machine.to('closing')) return;
    try {
      if (this.ws.readyState === this.ws.OPEN) {
        const bye = this.encoder.hangup();
        if (bye && this.opened) this.ws.send(bye, { binary: true });
        this.ws.close(code, reason.slice(0, 120));
      } else this.ws.terminate();
    } catch {
      this.ws.terminate();
    }
    // a peer that never answers the close handshake is cut after a second
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private onClosed(code: number, reason: string): void {
    if (this.machine.state === 'closed') return;
    this.machine.to('closed');
    this.emit('closed', { code, reason });
  }
}
