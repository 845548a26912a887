// What the STT vendor stand-ins (cartesia-stt-server.ts, elevenlabs-stt-server.ts) share: an HTTP
// server that upgrades one path to a WebSocket after checking the key (401 otherwise), the sessions it
// saw, a configurable latency before each result, and the "recogniser": an energy detector that cuts
// the audio into utterances (300 ms of silence ends one) and names each by its tone: the zero-crossing
// frequency of its loud frames, looked up in `words` (Hz → text, ±8 %), else "tone <hz>". So a test
// that plays a 600 Hz tone knows what the vendor "heard". Given `phrases` (a PhraseRecogniser), it
// names utterances by the phrase said instead (the turn-taking benchmark).
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { PhraseRecogniser } from './phrase-recogniser';

export interface SttSession {
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** PCM bytes received */
  bytes: number;
  /** performance.now() of the first and the last audio received (0 before any) */
  firstAudioAt: number;
  lastAudioAt: number;
  /** the text messages received (audio chunks of JSON protocols left out) */
  controls: string[];
  /** the finals sent */
  finals: string[];
  closed: boolean;
}

export interface Utterance {
  text: string;
  /** seconds from the first audio */
  start: number;
  end: number;
}

/** Cuts 16-bit PCM into utterances and names each by its tone. */
export class ToneRecogniser {
  private pcm = Buffer.alloc(0);
  private frames = 0;
  private voicedStart = -1;
  private lastVoiced = -1;
  private crossings = 0;
  private voicedSamples = 0;
  private interimSent = false;
  private prevSign = 0;
  private readonly frame: number;
  /** the utterance's audio at 8 kHz, up to its last voiced frame (phrase recognition) */
  private samples: number[] = [];
  private voicedLen = 0;

  constructor(
    private readonly rate: number,
    private readonly words: ReadonlyMap<number, string>,
    private readonly onInterim: (u: Utterance) => void,
    private readonly onFinal: (u: Utterance) => void,
    private readonly silenceFrames = 15,
    /** names utterances by the phrase said instead of by tone (phrase-recogniser.ts) */
    private readonly phrases: PhraseRecogniser | null = null,
  ) {
    this.frame = Math.round(rate / 50);
  }

  push(buf: Buffer): void {
    this.pcm = Buffer.concat([this.pcm, buf]);
    while (this.pcm.length >= this.frame * 2) {
      let sum = 0;
      let crossings = 0;
      for (let i = 0; i < this.frame; i++) {
        const v = this.pcm.readInt16LE(i * 2);
        sum += Math.abs(v);
        const sign = v > 0 ? 1 : v < 0 ? -1 : 0;
        if (sign !== 0 && this.prevSign !== 0 && sign !== this.prevSign) crossings++;
        if (sign !== 0) this.prevSign = sign;
      }
      const f = this.phrases ? this.pcm.subarray(0, this.frame * 2) : null;
      this.pcm = this.pcm.subarray(this.frame * 2);
      const t = this.frames++;
      if (f && this.voicedStart >= 0) this.keep(f);
      if (sum / this.frame > 300) {
        if (f && this.voicedStart < 0) this.keep(f);
        if (this.voicedStart < 0) this.voicedStart = t;
        this.lastVoiced = t;
        this.voicedLen = this.samples.length;
        this.crossings += crossings;
        this.voicedSamples += this.frame;
        if (!this.interimSent && t - this.voicedStart >= 10) {
          this.interimSent = true;
          this.onInterim(this.current());
        }
      } else if (this.voicedStart >= 0 && t - this.lastVoiced >= this.silenceFrames) this.flush();
    }
  }

  /** Ends the utterance in progress (if any). */
  flush(): Utterance | null {
    if (this.voicedStart < 0) return null;
    const u = this.current();
    this.voicedStart = -1;
    this.samples = [];
    this.voicedLen = 0;
    this.crossings = 0;
    this.voicedSamples = 0;
    this.interimSent = false;
    this.onFinal(u);
    return u;
  }

  get seconds(): number {
    return (this.frames * this.frame) / this.rate;
  }

  /** A frame of the utterance at 8 kHz (pairs averaged at 16 kHz). */
  private keep(f: Buffer): void {
    const step = this.rate / 8000;
    for (let i = 0; i + step <= f.length / 2; i += step) {
      let v = 0;
      for (let k = 0; k < step; k++) v += f.readInt16LE((i + k) * 2);
      this.samples.push(Math.round(v / step));
    }
  }

  private current(): Utterance {
    const hz = (this.crossings / 2) * (this.rate / Math.max(1, this.voicedSamples));
    let text = `tone ${Math.round(hz)}`;
    for (const [f, w] of this.words) if (Math.abs(hz - f) <= f * 0.08) text = w;
    if (this.phrases) text = this.phrases.recognise(Int16Array.from(this.samples.slice(0, this.voicedLen)), this.voicedStart >= 0 && this.lastVoiced === this.frames - 1).text;
    const sec = (f: number) => (f * this.frame) / this.rate;
    return { text, start: sec(this.voicedStart), end: sec(this.lastVoiced + 1) };
  }
}

/** A stand-in vendor: `path` upgraded when `authorized(req)`, each session run by `run`. */
export abstract class SttStandIn {
  readonly sessions: SttSession[] = [];
  /** Hz → the transcript of an utterance of that tone */
  readonly words = new Map<number, string>();
  /** ms before each result is sent (the vendor's latency) */
  latencyMs = 0;
  /** set: utterances are named by the phrase said (phrase-recogniser.ts), not by tone */
  phrases: PhraseRecogniser | null = null;
  /** the HTTP status of every upgrade from now on (an outage), 0 = none */
  refuseWith = 0;
  /** after this many ms of audio, the session fails with the vendor's error message (0 = never) */
  failAfterMs = 0;
  private readonly server = http.createServer((_req, res) => res.writeHead(404).end());
  private readonly wss = new WebSocketServer({ noServer: true });
  port = 0;

  constructor(
    readonly key: string,
    private readonly path: string,
  ) {
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== this.path) return socket.destroy();
      const status = this.refuseWith || (this.authorized(req) ? this.check(url.searchParams) : 401);
      if (status !== 0) {
        socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const s: SttSession = { path: url.pathname, query: url.searchParams, headers: req.headers, bytes: 0, firstAudioAt: 0, lastAudioAt: 0, controls: [], finals: [], closed: false };
        this.sessions.push(s);
        ws.on('close', () => (s.closed = true));
        this.run(ws, s);
      });
    });
  }

  protected abstract authorized(req: http.IncomingMessage): boolean;
  /** 0 when the query describes audio the vendor takes, else the HTTP status of the refusal */
  protected abstract check(q: URLSearchParams): number;
  protected abstract run(ws: WebSocket, s: SttSession): void;

  /** Counts `n` bytes of audio received by `s` now. */
  protected audio(s: SttSession, n: number): void {
    s.bytes += n;
    s.lastAudioAt = performance.now();
    s.firstAudioAt ||= s.lastAudioAt;
  }

  /** Sends `msg` after the configured latency (in order). */
  protected send(ws: WebSocket, msg: object, then?: () => void): void {
    const go = () => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
      then?.();
    };
    if (this.latencyMs > 0) setTimeout(go, this.latencyMs);
    else go();
  }

  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** The base URL the platform is given (`<VENDOR>_BASE_URL`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
