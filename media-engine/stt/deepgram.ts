/**
 * Deepgram's live transcription protocol (wss://api.deepgram.com/v1/listen) as an SttProvider:
 * query parameters describe the audio (linear16 at the stream's rate, 8 or 16 kHz, mono) and the recogniser options, the key
 * goes in `Authorization: Token <key>`; binary frames carry raw PCM, text frames carry control
 * messages (KeepAlive, CloseStream); the server answers with JSON `Results` messages (interim
 * and final alternatives with word times), `UtteranceEnd`, `SpeechStarted` and a closing
 * `Metadata`. Audio written before the socket opens is buffered (bounded) and sent on open.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import type { Frame } from '../dsp/frame';
import { SttError, sampleRateOf, type Direction, type SttProvider, type SttStream, type SttStreamEvents, type SttStreamOptions, type TranscriptEvent } from './provider';

export interface DeepgramOptions {
  apiKey: string;
  /** Default wss://api.deepgram.com/v1/listen (tests point it at a local server). */
  url?: string;
  /** Default nova-2. */
  model?: string;
  /** Audio held while connecting or when the socket is slow, ms. Default 10000. */
  maxBacklogMs?: number;
  /** KeepAlive interval while no audio flows, ms. Default 5000. */
  keepAliveMs?: number;
}

interface DgAlternative {
  transcript?: string;
  confidence?: number;
  words?: Array<{ word: string; start: number; end: number; confidence?: number }>;
}
interface DgResults {
  type: 'Results';
  start?: number;
  duration?: number;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: DgAlternative[] };
}

class DeepgramStream extends EventEmitter<SttStreamEvents> implements SttStream {
  droppedFrames = 0;
  private readonly ws: WebSocket;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private ended = false;
  private closed = false;
  private keepAlive: NodeJS.Timeout | null = null;
  private lastSend = Date.now();
  private readonly closedPromise: Promise<void>;

  constructor(
    url: string,
    apiKey: string,
    private readonly direction: Direction,
    private readonly maxBacklogBytes: number,
    keepAliveMs: number,
  ) {
    super();
    this.ws = new WebSocket(url, { headers: { Authorization: `Token ${apiKey}` } });
    this.closedPromise = new Promise((resolve) => this.ws.once('close', () => resolve()));
    this.ws.on('unexpected-response', (_req, res) => {
      this.fail(new SttError('RECOGNIZER_FAILED', `deepgram refused the connection: HTTP ${res.statusCode}`));
      this.ws.terminate();
    });
    this.ws.on('open', () => {
      for (const b of this.pending) this.ws.send(b);
      this.pending = [];
      this.pendingBytes = 0;
      if (this.ended) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
      this.keepAlive = setInterval(() => {
        if (Date.now() - this.lastSend >= keepAliveMs && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'KeepAlive' }));
      }, keepAliveMs);
    });
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: { type?: string };
      try {
        msg = JSON.parse((Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString()) as { type?: string };
      } catch {
        return;
      }
      if (msg.type === 'Results') this.onResults(msg as DgResults);
    });
    this.ws.on('error', (err) => this.fail(new SttError('RECOGNIZER_FAILED', `deepgram: ${err.message}`)));
    this.ws.on('close', (code, reason) => {
      if (this.keepAlive) clearInterval(this.keepAlive);
      // 1000 after CloseStream is the normal end; anything else before end() is a failure
      if (!this.ended && code !== 1000) this.fail(new SttError('RECOGNIZER_FAILED', `deepgram closed the stream: ${code} ${reason.toString()}`));
      this.closed = true;
      this.emit('close');
    });
  }

  write(frame: Frame): void {
    if (this.ended || this.closed) return;
    const buf = Buffer.from(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
    if (this.ws.readyState === WebSocket.OPEN && this.ws.bufferedAmount <= this.maxBacklogBytes) {
      this.ws.send(buf);
      this.lastSend = Date.now();
    } else if (this.ws.readyState === WebSocket.CONNECTING && this.pendingBytes + buf.length <= this.maxBacklogBytes) {
      this.pending.push(buf);
      this.pendingBytes += buf.length;
    } else this.droppedFrames++;
  }

  async end(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
      // a server that never closes must not hold the caller forever
      const t = setTimeout(() => this.ws.terminate(), 10_000);
      void this.closedPromise.finally(() => clearTimeout(t));
    }
    if (this.ws.readyState === WebSocket.CLOSED) return;
    await this.closedPromise;
  }

  abort(): void {
    this.ended = true;
    this.ws.terminate();
  }

  private onResults(r: DgResults): void {
    const alt = r.channel?.alternatives?.[0];
    const text = alt?.transcript?.trim() ?? '';
    if (!text) return;
    const words = alt?.words ?? [];
    const start = words.length ? words[0].start : (r.start ?? 0);
    const end = words.length ? words[words.length - 1].end : (r.start ?? 0) + (r.duration ?? 0);
    const ev: TranscriptEvent = {
      text,
      final: r.is_final === true,
      offsetMs: Math.round(start * 1000),
      durationMs: Math.max(0, Math.round((end - start) * 1000)),
      direction: this.direction,
    };
    if (typeof alt?.confidence === 'number') ev.confidence = alt.confidence;
    if (ev.final) ev.endOfUtterance = r.speech_final === true;
    this.emit('transcript', ev);
  }

  private fail(err: Error): void {
    if (this.closed) return;
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }
}

export class DeepgramProvider implements SttProvider {
  readonly name = 'deepgram';

  constructor(private readonly opts: DeepgramOptions) {}

  /** The listen URL with the audio format and recogniser options. */
  urlFor(o: SttStreamOptions = {}): string {
    const u = new URL(this.opts.url ?? 'wss://api.deepgram.com/v1/listen');
    const q = u.searchParams;
    q.set('encoding', 'linear16');
    q.set('sample_rate', String(sampleRateOf(o)));
    q.set('channels', '1');
    q.set('model', this.opts.model ?? 'nova-2');
    q.set('language', o.language ?? 'en-US');
    q.set('interim_results', 'true');
    q.set('punctuate', 'true');
    q.set('utterance_end_ms', '1000');
    for (const p of o.phrases ?? []) q.append('keywords', p);
    return u.toString();
  }

  createStream(o: SttStreamOptions = {}): SttStream {
    if (!this.opts.apiKey) throw new SttError('RECOGNIZER_FAILED', 'deepgram needs an API key (DEEPGRAM_API_KEY)');
    // 16-bit samples: 16 bytes a ms at 8 kHz, 32 at 16 kHz
    const bytesPerMs = (sampleRateOf(o) * 2) / 1000;
    return new DeepgramStream(this.urlFor(o), this.opts.apiKey, o.direction ?? 'inbound', (this.opts.maxBacklogMs ?? 10_000) * bytesPerMs, this.opts.keepAliveMs ?? 5000);
  }
}
