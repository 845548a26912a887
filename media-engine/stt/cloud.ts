/**
 * The shared part of the WebSocket recognisers of cloud vendors (cartesia.ts, elevenlabs.ts): where
 * the vendor is (`<VENDOR>_BASE_URL`, default its public endpoint) and the platform's key
 * (`<VENDOR>_API_KEY`), read from the environment when a stream is made, as core/config.ts reads them
 * for the voices; the connection checked by the egress policy (core/net) and pinned to the checked
 * address; audio held (bounded) until the socket is open; every failure one `error` naming the vendor
 * and what went wrong (an HTTP status, a vendor error code), never the key or the vendor's answer.
 * A quiet line costs fewer writes: once it has been quiet longer than anything the vendor ends on
 * (`quietAfterMs`), quiet frames go out HOLD_FRAMES at a time, and the first frame with sound sends
 * what was held and itself at once (the same audio in the same order; speech never waits).
 * A backlog costs one write, not one a frame: frames written in the same turn of the event loop (a
 * stalled loop's queue of the media worker's batches, delivered at once) go out as one message at the
 * end of that turn (setImmediate; BURST_FRAMES at most a message); a frame written alone, as each is
 * in real time, still goes at once.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { EgressPolicy, EgressRefused, egressSettingsFromEnv } from '../../core/net';
import { QUIET_LINE_DBFS, meanSquare, type Frame } from '../dsp/frame';
import { SttError, type SttStream, type SttStreamEvents, type TranscriptEvent } from './provider';

export interface CloudEndpoint {
  /** http(s) or ws(s), no trailing slash */
  baseUrl: string;
  apiKey: string;
}

/** `<PREFIX>_BASE_URL` / `<PREFIX>_API_KEY` of `env`, the base defaulting to `defaultUrl`. */
export function endpointFromEnv(prefix: string, defaultUrl: string, env: NodeJS.ProcessEnv = process.env): CloudEndpoint {
  return { baseUrl: (env[`${prefix}_BASE_URL`]?.trim() || defaultUrl).replace(/\/+$/, ''), apiKey: env[`${prefix}_API_KEY`]?.trim() ?? '' };
}

/** `base` (http(s) or ws(s)) with `path` as a WebSocket URL. */
export function wsUrl(base: string, path: string): URL {
  return new URL(`${base.replace(/^http/i, 'ws')}${path}`);
}

/** What a vendor adds to the shared stream. */
export interface CloudWire {
  /** the vendor's name, in every error */
  vendor: string;
  url: URL;
  headers: Record<string, string>;
  /** one 20 ms frame (16-bit PCM at the stream's rate) as the vendor wants it */
  encode(pcm: Buffer): Buffer | string;
  /** the text message that says "no more audio" (null: close the socket) */
  endMessage: string | null;
  /** how long end() waits for the vendor's last message, ms */
  endTimeoutMs: number;
  /** a text message from the vendor: transcripts are emitted by `s`; a string return is a failure */
  onMessage(msg: Record<string, unknown>, s: CloudSttStream): string | void;
  /** true when the message is the vendor's last one after `endMessage` */
  isLast(msg: Record<string, unknown>): boolean;
  /** a text message sent when no audio went out for `everyMs` (Deepgram's KeepAlive) */
  keepAlive?: { message: string; everyMs: number };
  /**
   * quiet audio after which quiet frames go out HOLD_FRAMES at a time, ms (default QUIET_AFTER_MS):
   * longer than any silence the vendor ends an utterance on (its endpointing, its utterance end), so
   * every end the vendor would find comes as soon as with one message a frame
   */
  quietAfterMs?: number;
}

/** Frames sent in one message once the line is quiet (100 ms of audio). */
export const HOLD_FRAMES = 5;
/**
 * Frames of one turn sent in one message at most (200 ms of audio: the chunk Deepgram recommends at
 * most 250 ms of), so a long backlog goes in chunks a vendor takes.
 */
export const BURST_FRAMES = 10;
/** The default quiet hold, ms: over the 1 s utterance end and the endpointing the platform asks for. */
export const QUIET_AFTER_MS = 2000;
/** A frame is quiet under this mean square (QUIET_LINE_DBFS). */
const QUIET_MS = (32768 * 10 ** (QUIET_LINE_DBFS / 20)) ** 2;

/** The vendor's HTTP status on a refused upgrade, said plainly. */
export function statusReason(status: number): string {
  if (status === 401 || status === 403) return `the API key was refused (HTTP ${status})`;
  if (status === 429) return 'rate limited (HTTP 429)';
  return `the vendor answered HTTP ${status}`;
}

export class CloudSttStream extends EventEmitter<SttStreamEvents> implements SttStream {
  droppedFrames = 0;
  private ws: WebSocket | null = null;
  private pending: (Buffer | string)[] = [];
  private pendingBytes = 0;
  private ended = false;
  private closed = false;
  private failed = false;
  private readonly closedPromise: Promise<void>;
  private resolveClosed!: () => void;
  private keepAliveTimer: NodeJS.Timeout | null = null;
  private lastSend = Date.now();
  /** quiet frames in a row */
  private quietRun = 0;
  /** quiet frames not sent yet (copies), at most HOLD_FRAMES - 1 between writes */
  private held: Buffer[] = [];
  /** frames of this turn of the event loop not sent yet (copies): one message at its end */
  private burst: Buffer[] = [];
  private burstFlush: NodeJS.Immediate | null = null;
  private readonly quietAfterFrames: number;

  constructor(
    private readonly wire: CloudWire,
    egress: EgressPolicy,
    private readonly maxBacklogBytes: number,
  ) {
    super();
    this.quietAfterFrames = Math.ceil((wire.quietAfterMs ?? QUIET_AFTER_MS) / 20);
    this.closedPromise = new Promise((r) => (this.resolveClosed = r));
    void this.connect(egress);
  }

  private async connect(egress: EgressPolicy): Promise<void> {
    let lookup;
    try {
      lookup = (await egress.checkDestination(this.wire.url.hostname)).lookup;
    } catch (e) {
      const why = e instanceof EgressRefused ? `the egress policy refused the vendor URL: ${e.message}` : `the vendor could not be reached: ${(e as Error).message}`;
      return this.finish(why);
    }
    if (this.closed) return;
    const ws = new WebSocket(this.wire.url, { headers: this.wire.headers, lookup, handshakeTimeout: 10_000 });
    this.ws = ws;
    ws.on('unexpected-response', (_req, res) => {
      this.finish(statusReason(res.statusCode ?? 0));
      ws.terminate();
    });
    ws.on('open', () => {
      for (const b of this.pending) ws.send(b);
      this.pending = [];
      this.pendingBytes = 0;
      if (this.ended) this.sendEnd();
      const k = this.wire.keepAlive;
      if (k) {
        this.keepAliveTimer = setInterval(() => {
          if (Date.now() - this.lastSend >= k.everyMs && ws.readyState === WebSocket.OPEN) ws.send(k.message);
        }, k.everyMs);
      }
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let msg: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse((Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null) return;
        msg = parsed as Record<string, unknown>;
      } catch {
        return this.finish('the vendor sent a message that is not JSON');
      }
      const err = this.wire.onMessage(msg, this);
      if (typeof err === 'string') return this.finish(err);
      if (this.ended && this.wire.isLast(msg)) ws.close(1000);
    });
    ws.on('error', (e) => this.finish(`the vendor could not be reached: ${e.message}`));
    ws.on('close', (code) => {
      // a close before end() is a failure whatever its code; after it, the normal end
      if (!this.ended) this.finish(`the vendor closed the stream (${code})`);
      this.markClosed();
    });
  }

  /** Emits a transcript (for the vendor's onMessage). */
  transcript(ev: TranscriptEvent): void {
    if (!this.failed) this.emit('transcript', ev);
  }

  write(frame: Frame): void {
    if (this.ended || this.closed) return;
    const pcm = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
    this.quietRun = meanSquare(frame) < QUIET_MS ? this.quietRun + 1 : 0;
    if (this.quietRun > this.quietAfterFrames) {
      // the frame is not ours to keep: a copy waits for the next ones
      this.held.push(Buffer.from(pcm));
      if (this.held.length >= HOLD_FRAMES) this.sendHeld();
      return;
    }
    // what was held came before this frame (and this turn's frames before what was held)
    if (this.held.length) this.sendHeld();
    // the frame is not ours to keep: the copy goes at the end of this turn, with any written after it
    this.burst.push(Buffer.from(pcm));
    if (this.burst.length >= BURST_FRAMES) this.sendBurst();
    else this.burstFlush ??= setImmediate(() => this.sendBurst());
  }

  /** What was held, as one message (after this turn's frames: they came first). */
  private sendHeld(): void {
    this.sendBurst();
    if (!this.held.length) return;
    const frames = this.held.length;
    const pcm = frames === 1 ? this.held[0]! : Buffer.concat(this.held);
    this.held = [];
    this.send(pcm, frames);
  }

  /** This turn's frames, as one message. */
  private sendBurst(): void {
    if (this.burstFlush) clearImmediate(this.burstFlush);
    this.burstFlush = null;
    if (!this.burst.length) return;
    const frames = this.burst.length;
    const pcm = frames === 1 ? this.burst[0]! : Buffer.concat(this.burst);
    this.burst = [];
    this.send(pcm, frames);
  }

  backlogShare(): number {
    const ws = this.ws;
    const queued = ws && ws.readyState === WebSocket.OPEN ? ws.bufferedAmount : this.pendingBytes;
    return Math.min(1, queued / this.maxBacklogBytes);
  }

  /** `frames` frames of audio as one message: sent, queued until the socket opens, or dropped (counted). */
  private send(pcm: Buffer, frames: number): void {
    const msg = this.wire.encode(pcm);
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN && ws.bufferedAmount <= this.maxBacklogBytes) {
      ws.send(msg);
      this.lastSend = Date.now();
    } else if ((!ws || ws.readyState === WebSocket.CONNECTING) && this.pendingBytes + msg.length <= this.maxBacklogBytes) {
      this.pending.push(msg);
      this.pendingBytes += msg.length;
    } else this.droppedFrames += frames;
  }

  async end(): Promise<void> {
    if (!this.ended) {
      this.sendHeld();
      this.ended = true;
      if (this.ws?.readyState === WebSocket.OPEN) this.sendEnd();
      else if (!this.ws) {
        // still checking the address: nothing was sent, nothing will come
        this.markClosed();
      }
      // a vendor that never closes must not hold the caller forever
      const t = setTimeout(() => (this.ws ? this.ws.terminate() : this.markClosed()), this.wire.endTimeoutMs);
      void this.closedPromise.finally(() => clearTimeout(t));
    }
    await this.closedPromise;
  }

  abort(): void {
    this.ended = true;
    this.dropBurst();
    if (this.ws) this.ws.terminate();
    else this.markClosed();
  }

  private sendEnd(): void {
    if (this.wire.endMessage === null) this.ws?.close(1000);
    else this.ws?.send(this.wire.endMessage);
  }

  private finish(reason: string): void {
    if (this.failed || this.closed) return;
    this.failed = true;
    const err = new SttError('RECOGNIZER_FAILED', `${this.wire.vendor}: ${reason}`);
    if (this.listenerCount('error') > 0) this.emit('error', err);
    if (!this.ws) this.markClosed();
    else this.ws.terminate();
  }

  /** This turn's frames, not sent (the stream is aborted or closed). */
  private dropBurst(): void {
    if (this.burstFlush) clearImmediate(this.burstFlush);
    this.burstFlush = null;
    this.burst = [];
  }

  private markClosed(): void {
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.dropBurst();
    if (this.closed) return;
    this.closed = true;
    this.resolveClosed();
    this.emit('close');
  }
}

/** The egress policy of the environment the stream is made in (built each time: the settings are read then). */
export function egressOf(env: NodeJS.ProcessEnv = process.env): EgressPolicy {
  return new EgressPolicy(egressSettingsFromEnv(env));
}
