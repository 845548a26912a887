// A local server speaking Deepgram's live transcription protocol (GET /v1/listen upgraded to a
// WebSocket): `Authorization: Token <key>`, audio format in the query, binary linear16 frames in,
// JSON Results (interim and final, with word times) out, KeepAlive ignored, CloseStream answered
// with a final flush, Metadata and a 1000 close. Its "recogniser" is an energy detector: each
// utterance is reported as "utterance <n>", so tests can check segmentation and timing exactly;
// given a phrase recogniser it reports the phrases said instead (deepgram-phrases.ts).
// It keeps what it received (the first minute) and checks the rate it was told against the bytes it
// got over the whole stream: audio streamed in real time at another rate than `sample_rate` (8 kHz
// bytes announced as 16 kHz, or the reverse) is recorded as the session's `rateError` and answered
// with a 4000 close instead of Metadata when the stream ends. Deepgram itself checks no rate (it
// closes a stream only after 10 s without audio, NET-0001): this check is the tests' own, for a
// wrong `sample_rate`. It judges the stream only at its end, never on one frame's arrival: the
// stand-in runs in the test process, and a stall of that process delays the frames (they come
// after it in a burst), which a rate measured at the first frame after the stall took for audio
// that never came (issue 53: 6,406 bytes/s at 8 kHz, the process stalled 1-2 s under load).
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { phraseSession, type PhraseSessionOptions } from './deepgram-phrases';

export interface DgSession {
  query: URLSearchParams;
  bytes: number;
  keepAlives: number;
  closeStream: boolean;
  /** the socket is gone (CloseStream answered, or the client dropped it) */
  closed: boolean;
  /** the audio received, as it came (up to a minute of it) */
  audio: Buffer[];
  /** bytes a second over the stream (past its first SETTLE_MS, to the last binary frame), 0 before RATE_CHECK_MS of it */
  byteRate: number;
  /** set at the stream's end (CloseStream, or the client's close) when byteRate is not the 2 · sample_rate a real-time stream of that rate gives */
  rateError: string | null;
  /** the energy recogniser's 20 ms frames heard as voiced and Results sent (interim, final; not counted with a phrase recogniser): what a test reports when a transcript does not come */
  voicedFrames: number;
  interims: number;
  finals: number;
}

/**
 * The rate is measured from the first frame at least SETTLE_MS after the stream's first (audio held
 * while connecting comes at once, frame by frame, and is not a rate) to the last frame, and judged
 * at the stream's end over at least RATE_CHECK_MS: frames a stall held back have come by then.
 */
const SETTLE_MS = 300;
const RATE_CHECK_MS = 1500;

export class FakeDeepgram {
  readonly sessions: DgSession[] = [];
  private readonly server = http.createServer((_req, res) => res.writeHead(404).end());
  private readonly wss = new WebSocketServer({ noServer: true });
  port = 0;

  /** `phrases`: recognise those phrases, with Deepgram's endpointing and latency (deepgram-phrases.ts), instead of "utterance <n>" */
  constructor(
    private readonly key: string,
    private readonly phrases?: PhraseSessionOptions,
  ) {
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== '/v1/listen') return socket.destroy();
      if (req.headers.authorization !== `Token ${this.key}`) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const q = url.searchParams;
      if (q.get('encoding') !== 'linear16' || !q.get('sample_rate')) {
        socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, q));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/v1/listen`;
  }

  private session(ws: WebSocket, query: URLSearchParams): void {
    const rate = Number(query.get('sample_rate'));
    const s: DgSession = { query, bytes: 0, keepAlives: 0, closeStream: false, closed: false, audio: [], byteRate: 0, rateError: null, voicedFrames: 0, interims: 0, finals: 0 };
    this.sessions.push(s);
    if (this.phrases) {
      phraseSession(
        ws,
        query,
        this.phrases,
        (n) => (s.bytes += n),
        () => (s.closed = true),
      );
      return;
    }
    const meter = new RateMeter(s, rate);
    const recogniser = new EnergyRecogniser(ws, s, query);
    ws.on('close', () => {
      s.closed = true;
      meter.wrongRate();
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        const msg = JSON.parse(data.toString()) as { type: string };
        if (msg.type === 'KeepAlive') s.keepAlives++;
        if (msg.type === 'CloseStream') {
          s.closeStream = true;
          if (meter.wrongRate()) return ws.close(4000, s.rateError!);
          recogniser.closeUtterance();
          ws.send(JSON.stringify({ type: 'Metadata', request_id: 'local', duration: recogniser.seconds(), channels: 1 }));
          ws.close(1000);
        }
        return;
      }
      const buf = data as Buffer;
      s.bytes += buf.length;
      if (s.bytes <= rate * 2 * 60) s.audio.push(buf);
      meter.frame();
      recogniser.push(buf);
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** The stream's byte rate (DgSession.byteRate), and at its end whether it is the one `sample_rate` announced. */
class RateMeter {
  private firstAt = 0;
  private markAt = 0;
  private markBytes = 0;

  constructor(
    private readonly s: DgSession,
    private readonly rate: number,
  ) {}

  /** On each binary frame (its bytes counted): the mark, and byteRate so far (to this frame). */
  frame(): void {
    const now = performance.now();
    if (!this.firstAt) this.firstAt = now;
    if (!this.markAt && now - this.firstAt >= SETTLE_MS) {
      this.markAt = now;
      this.markBytes = this.s.bytes;
      return;
    }
    const ms = now - this.markAt;
    // the bytes after the mark's frame, over the time from it to this frame
    if (this.markAt && ms >= RATE_CHECK_MS) this.s.byteRate = Math.round(((this.s.bytes - this.markBytes) * 1000) / ms);
  }

  /** At the stream's end: true (and the session's rateError set) when the whole stream's rate is not the one announced. */
  wrongRate(): boolean {
    const want = this.rate * 2;
    const s = this.s;
    if (!s.rateError && s.byteRate && Math.abs(s.byteRate - want) > want * 0.25) s.rateError = `sample_rate=${this.rate} wants ${want} bytes/s, got ${s.byteRate}`;
    return s.rateError !== null;
  }
}

/**
 * The energy "recogniser": 20 ms frames over 300 mean amplitude are voiced; an utterance is sent as an
 * interim Result after 25 voiced frames and as a final one ("utterance <n>") after 15 unvoiced ones.
 */
class EnergyRecogniser {
  private readonly rate: number;
  private readonly frameLen: number;
  private pcm = Buffer.alloc(0);
  private t = 0; // frames analysed
  private voicedStart = -1;
  private lastVoiced = -1;
  private n = 0;
  private interimSent = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly s: DgSession,
    private readonly query: URLSearchParams,
  ) {
    this.rate = Number(query.get('sample_rate'));
    this.frameLen = Math.round(this.rate / 50);
  }

  /** Seconds of audio analysed (the first `f` frames'). */
  seconds(f = this.t): number {
    return (f * this.frameLen) / this.rate;
  }

  push(buf: Buffer): void {
    const frame = this.frameLen;
    this.pcm = Buffer.concat([this.pcm, buf]);
    while (this.pcm.length >= frame * 2) {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += Math.abs(this.pcm.readInt16LE(i * 2));
      this.pcm = this.pcm.subarray(frame * 2);
      const t = this.t;
      if (sum / frame > 300) {
        this.s.voicedFrames++;
        if (this.voicedStart < 0) this.voicedStart = t;
        this.lastVoiced = t;
        if (!this.interimSent && t - this.voicedStart >= 25) {
          this.interimSent = true;
          this.results(false, `utterance ${this.n + 1} so far`, this.voicedStart, t + 1);
        }
      } else if (this.voicedStart >= 0 && t - this.lastVoiced >= 15) this.closeUtterance();
      this.t++;
    }
  }

  closeUtterance(): void {
    if (this.voicedStart < 0) return;
    this.results(true, `utterance ${++this.n}`, this.voicedStart, this.lastVoiced + 1);
    this.voicedStart = -1;
    this.interimSent = false;
  }

  /** One Results message, Deepgram's shape, with the utterance's one word timed. */
  private results(isFinal: boolean, text: string, from: number, to: number): void {
    if (isFinal) this.s.finals++;
    else this.s.interims++;
    this.ws.send(
      JSON.stringify({
        type: 'Results',
        channel_index: [0, 1],
        duration: this.seconds(to - from),
        start: this.seconds(from),
        is_final: isFinal,
        speech_final: isFinal,
        channel: { alternatives: [{ transcript: text, confidence: 0.91, words: [{ word: text.split(' ')[0], start: this.seconds(from), end: this.seconds(to), confidence: 0.91 }] }] },
        metadata: { request_id: 'local', model_info: { name: this.query.get('model') ?? 'nova-2' } },
      }),
    );
  }
}
