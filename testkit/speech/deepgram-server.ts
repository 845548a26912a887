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
    const frame = Math.round(rate / 50);
    const s: DgSession = { query, bytes: 0, keepAlives: 0, closeStream: false, closed: false, audio: [], byteRate: 0, rateError: null, voicedFrames: 0, interims: 0, finals: 0 };
    if (this.phrases) {
      this.sessions.push(s);
      phraseSession(
        ws,
        query,
        this.phrases,
        (n) => (s.bytes += n),
        () => (s.closed = true),
      );
      return;
    }
    let firstAt = 0;
    let markAt = 0;
    let markBytes = 0;
    /** on each binary frame (its bytes counted): the mark, and byteRate so far (to this frame) */
    const measure = () => {
      const now = performance.now();
      if (!markAt && firstAt && now - firstAt >= SETTLE_MS) {
        markAt = now;
        markBytes = s.bytes;
        return;
      }
      const ms = now - markAt;
      // the bytes after the mark's frame, over the time from it to this frame
      if (markAt && ms >= RATE_CHECK_MS) s.byteRate = Math.round(((s.bytes - markBytes) * 1000) / ms);
    };
    /** at the stream's end: true (and the session's rateError set) when the whole stream's rate is not the one announced */
    const wrongRate = () => {
      const want = rate * 2;
      if (!s.rateError && s.byteRate && Math.abs(s.byteRate - want) > want * 0.25) s.rateError = `sample_rate=${rate} wants ${want} bytes/s, got ${s.byteRate}`;
      return s.rateError !== null;
    };
    ws.on('close', () => {
      s.closed = true;
      wrongRate();
    });
    this.sessions.push(s);
    let pcm = Buffer.alloc(0);
    let t = 0; // frames analysed
    let voicedStart = -1;
    let lastVoiced = -1;
    let n = 0;
    let interimSent = false;
    const sec = (f: number) => (f * frame) / rate;
    const results = (isFinal: boolean, text: string, from: number, to: number) => {
      if (isFinal) s.finals++;
      else s.interims++;
      ws.send(
        JSON.stringify({
          type: 'Results',
          channel_index: [0, 1],
          duration: sec(to - from),
          start: sec(from),
          is_final: isFinal,
          speech_final: isFinal,
          channel: { alternatives: [{ transcript: text, confidence: 0.91, words: [{ word: text.split(' ')[0], start: sec(from), end: sec(to), confidence: 0.91 }] }] },
          metadata: { request_id: 'local', model_info: { name: query.get('model') ?? 'nova-2' } },
        }),
      );
    };
    const closeUtterance = () => {
      if (voicedStart < 0) return;
      results(true, `utterance ${++n}`, voicedStart, lastVoiced + 1);
      voicedStart = -1;
      interimSent = false;
    };
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        const msg = JSON.parse(data.toString()) as { type: string };
        if (msg.type === 'KeepAlive') s.keepAlives++;
        if (msg.type === 'CloseStream') {
          s.closeStream = true;
          if (wrongRate()) return ws.close(4000, s.rateError!);
          closeUtterance();
          ws.send(JSON.stringify({ type: 'Metadata', request_id: 'local', duration: sec(t), channels: 1 }));
          ws.close(1000);
        }
        return;
      }
      const buf = data as Buffer;
      if (!firstAt) firstAt = performance.now();
      s.bytes += buf.length;
      if (s.bytes <= rate * 2 * 60) s.audio.push(buf);
      measure();
      pcm = Buffer.concat([pcm, buf]);
      while (pcm.length >= frame * 2) {
        let sum = 0;
        for (let i = 0; i < frame; i++) sum += Math.abs(pcm.readInt16LE(i * 2));
        pcm = pcm.subarray(frame * 2);
        if (sum / frame > 300) {
          s.voicedFrames++;
          if (voicedStart < 0) voicedStart = t;
          lastVoiced = t;
          if (!interimSent && t - voicedStart >= 25) {
            interimSent = true;
            results(false, `utterance ${n + 1} so far`, voicedStart, t + 1);
          }
        } else if (voicedStart >= 0 && t - lastVoiced >= 15) closeUtterance();
        t++;
      }
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
