// Local servers speaking the two cloud engines that transcribe recordings (media-app/speech/recording-cloud.ts),
// written from their API references, recognising by tone like the streaming stand-ins (tone-stt.ts):
// - Google Speech-to-Text v1: POST /v1/speech:recognize, key in `x-goog-api-key` (or `?key=`), JSON
//   { config: { encoding: LINEAR16, sampleRateHertz, languageCode, enableWordTimeOffsets }, audio: { content } };
//   answers { results: [{ alternatives: [{ transcript, confidence, words: [{ startTime: "1.200s", endTime, word }] }],
//   resultEndTime, languageCode }], totalBilledTime, requestId }; errors as { error: { code, message, status } }
//   (400 INVALID_ARGUMENT for a bad config or more than a minute of audio, 403 PERMISSION_DENIED for a bad key).
// - OpenAI: POST /v1/audio/transcriptions, `Authorization: Bearer`, multipart (file, model, language,
//   response_format, timestamp_granularities[]); `verbose_json` answers { task, language, duration, text,
//   segments: [{ id, start, end, text, ... }] }; errors as { error: { message, type, code } } (401 invalid_api_key).
// Each keeps what it was sent (`requests`: the accepted ones; `seen`: every request's headers); `status` forces an error answer; `latencyMs` delays each answer.
import http from 'node:http';
import { ToneRecogniser, type Utterance } from './tone-stt';

export interface FileRequest {
  headers: http.IncomingHttpHeaders;
  /** the audio's rate, as the request said it */
  rate: number;
  /** seconds of audio */
  seconds: number;
  /** Google: the config; OpenAI: the form fields but the file */
  fields: Record<string, unknown>;
}

function recognise(pcm: Buffer, rate: number, words: ReadonlyMap<number, string>): Utterance[] {
  const out: Utterance[] = [];
  const rec = new ToneRecogniser(
    rate,
    words,
    () => undefined,
    (u) => out.push(u),
  );
  rec.push(pcm);
  rec.flush();
  return out;
}

abstract class FileStandIn {
  readonly requests: FileRequest[] = [];
  /** the headers of every request, refused ones too */
  readonly seen: http.IncomingHttpHeaders[] = [];
  readonly words = new Map<number, string>();
  latencyMs = 0;
  /** answer every request with this HTTP status (0: recognise) */
  status = 0;
  port = 0;
  private readonly server = http.createServer((req, res) => {
    this.seen.push(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reply = (status: number, body: object) => setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)), this.latencyMs);
      void this.handle(req, Buffer.concat(chunks))
        .then(([status, body]) => reply(status, body))
        .catch((e: Error) => reply(500, { error: { message: e.message } }));
    });
  });

  constructor(readonly key: string) {}

  protected abstract handle(req: http.IncomingMessage, body: Buffer): Promise<[number, object]>;

  protected recognise(pcm: Buffer, rate: number): Utterance[] {
    return recognise(pcm, rate, this.words);
  }

  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const gErr = (code: number, status: string, message: string): [number, object] => [code, { error: { code, message, status } }];

export class FakeGoogleStt extends FileStandIn {
  protected async handle(req: http.IncomingMessage, body: Buffer): Promise<[number, object]> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method !== 'POST' || url.pathname !== '/v1/speech:recognize') return gErr(404, 'NOT_FOUND', 'not found');
    const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (key !== this.key) return gErr(403, 'PERMISSION_DENIED', 'The request is missing a valid API key.');
    if (this.status) return gErr(this.status, 'UNAVAILABLE', 'forced');
    let j: { config?: { encoding?: string; sampleRateHertz?: number; languageCode?: string }; audio?: { content?: string } };
    try {
      j = JSON.parse(body.toString('utf8')) as typeof j;
    } catch {
      return gErr(400, 'INVALID_ARGUMENT', 'Invalid JSON payload');
    }
    const c = j.config ?? {};
    if (c.encoding !== 'LINEAR16' || !c.sampleRateHertz || !c.languageCode || !j.audio?.content) return gErr(400, 'INVALID_ARGUMENT', 'Invalid recognition config');
    const pcm = Buffer.from(j.audio.content, 'base64');
    const seconds = pcm.length / 2 / c.sampleRateHertz;
    this.requests.push({ headers: req.headers, rate: c.sampleRateHertz, seconds, fields: c });
    if (seconds > 60) return gErr(400, 'INVALID_ARGUMENT', 'Sync input too long. For audio longer than 1 min use LongRunningRecognize with a uri parameter.');
    const s = (t: number) => `${t.toFixed(3)}s`;
    const results = this.recognise(pcm, c.sampleRateHertz).map((u) => ({
      alternatives: [{ transcript: u.text, confidence: 0.93, words: u.text.split(' ').map((w) => ({ startTime: s(u.start), endTime: s(u.end), word: w })) }],
      resultEndTime: s(u.end),
      languageCode: c.languageCode!.toLowerCase(),
    }));
    return [200, { results, totalBilledTime: `${Math.ceil(seconds)}s`, requestId: String(this.requests.length) }];
  }
}

const oErr = (status: number, message: string, code: string | null): [number, object] => [status, { error: { message, type: 'invalid_request_error', param: null, code } }];

export class FakeOpenAiTranscribe extends FileStandIn {
  protected async handle(req: http.IncomingMessage, body: Buffer): Promise<[number, object]> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method !== 'POST' || url.pathname !== '/v1/audio/transcriptions') return oErr(404, 'not found', null);
    if (req.headers.authorization !== `Bearer ${this.key}`) return oErr(401, 'Incorrect API key provided.', 'invalid_api_key');
    if (this.status) return oErr(this.status, 'forced', null);
    const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body }).formData();
    const file = form.get('file');
    if (!(file instanceof Blob) || !form.get('model')) return oErr(400, "'file' and 'model' are required", null);
    const wav = Buffer.from(await file.arrayBuffer());
    if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.readUInt16LE(20) !== 1 || wav.readUInt16LE(34) !== 16) return oErr(400, 'Invalid file format.', null);
    const rate = wav.readUInt32LE(24);
    const pcm = wav.subarray(44);
    const fields: Record<string, unknown> = {};
    for (const [k, v] of form.entries()) if (k !== 'file') fields[k] = v;
    const seconds = pcm.length / 2 / rate;
    this.requests.push({ headers: req.headers, rate, seconds, fields });
    const utts = this.recognise(pcm, rate);
    const text = utts.map((u) => u.text).join(' ');
    if (fields.response_format !== 'verbose_json') return [200, { text }];
    const segments = utts.map((u, id) => ({ id, seek: 0, start: u.start, end: u.end, text: ` ${u.text}`, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 }));
    return [200, { task: 'transcribe', language: 'english', duration: seconds, text, segments }];
  }
}
