/**
 * Transcription of a recording's WAV by a cloud engine (transcribe provider `google` or `openai`,
 * our extension for recordings; docs/speech.md "Transcription"): the file is sent at its own rate
 * (16 kHz for a wideband call's recording, 8 kHz otherwise) as 16-bit PCM, mono.
 *
 * - google: Speech-to-Text v1 `POST {GOOGLE_STT_BASE_URL}/v1/speech:recognize` (default
 *   https://speech.googleapis.com), key in `x-goog-api-key` (GOOGLE_API_KEY), `LINEAR16` at the file's
 *   rate, word time offsets; the synchronous method takes up to a minute, so longer files go in 55 s
 *   pieces, each result's offset shifted by its piece's start.
 * - openai: `POST {OPENAI_BASE_URL}/audio/transcriptions` (default https://api.openai.com/v1) through the
 *   official `openai` SDK, model `whisper-1`, `verbose_json` (segments with times); the SDK's requests
 *   go through the egress policy by the `fetch` it is given (below). At most 25 MB (the vendor's limit).
 *
 * Every request goes through the egress policy; a failure names the engine and the HTTP status,
 * never the key or the vendor's answer.
 */
import { googleSttFromEnv } from '../../core/speech/vendors';
import OpenAI, { toFile } from 'openai';
import { EgressRefused, type EgressPolicy } from '../../core/net';

export type RecordingEngine = 'google' | 'openai';

export interface EngineEndpoint {
  baseUrl: string;
  apiKey: string;
}

export interface Segment {
  text: string;
  offsetMs: number;
  confidence?: number;
}

/** Mono 16-bit PCM at its rate. */
export interface Pcm {
  samples: Int16Array;
  rate: number;
}

/** The endpoint of `engine` from the environment: GOOGLE_STT_BASE_URL + GOOGLE_API_KEY, OPENAI_BASE_URL + OPENAI_API_KEY. */
export function engineEndpoint(engine: RecordingEngine, env: NodeJS.ProcessEnv = process.env): EngineEndpoint {
  if (engine === 'google') return googleSttFromEnv(env);
  const [base, key, def] = ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'https://api.openai.com/v1'];
  return { baseUrl: (env[base]?.trim() || def).replace(/\/+$/, ''), apiKey: env[key]?.trim() ?? '' };
}

export class RecordingEngineError extends Error {
  constructor(engine: RecordingEngine, reason: string) {
    super(`${engine}: ${reason}`);
    this.name = 'RecordingEngineError';
  }
}

function statusReason(status: number): string {
  if (status === 401 || status === 403) return `the API key was refused (HTTP ${status})`;
  return `transcription failed (HTTP ${status})`;
}

function netReason(e: unknown): string {
  return e instanceof EgressRefused ? `the egress policy refused the vendor URL: ${e.message}` : `the vendor could not be reached: ${(e as Error).message}`;
}

/** A WAV file (16-bit PCM mono) of `pcm`. */
export function wavOf(pcm: Pcm): Buffer {
  const data = Buffer.from(pcm.samples.buffer, pcm.samples.byteOffset, pcm.samples.byteLength);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(pcm.rate, 24);
  h.writeUInt32LE(pcm.rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** "1.500s" (Google's Duration in JSON) → ms. */
function durationMs(d: unknown): number {
  return typeof d === 'string' && /^\d+(\.\d+)?s$/.test(d) ? Math.round(parseFloat(d) * 1000) : 0;
}

interface GoogleResult {
  alternatives?: { transcript?: string; confidence?: number; words?: { startTime?: string }[] }[];
  resultEndTime?: string;
}

const GOOGLE_PIECE_SECS = 55;

async function google(pcm: Pcm, language: string, ep: EngineEndpoint, egress: EgressPolicy): Promise<Segment[]> {
  const out: Segment[] = [];
  const piece = GOOGLE_PIECE_SECS * pcm.rate;
  for (let at = 0; at < pcm.samples.length; at += piece) {
    const part = pcm.samples.subarray(at, Math.min(pcm.samples.length, at + piece));
    const body = JSON.stringify({
      config: { encoding: 'LINEAR16', sampleRateHertz: pcm.rate, audioChannelCount: 1, languageCode: language, enableWordTimeOffsets: true, enableAutomaticPunctuation: true },
      audio: { content: Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString('base64') },
    });
    let res;
    try {
      res = await egress.fetch(`${ep.baseUrl}/v1/speech:recognize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': ep.apiKey },
        body,
        timeoutMs: 120_000,
        maxBytes: 4 << 20,
      });
    } catch (e) {
      throw new RecordingEngineError('google', netReason(e));
    }
    if (res.status !== 200) throw new RecordingEngineError('google', statusReason(res.status));
    let results: GoogleResult[];
    try {
      results = ((JSON.parse(res.body.toString('utf8')) as { results?: GoogleResult[] }).results ?? []) as GoogleResult[];
    } catch {
      throw new RecordingEngineError('google', 'the vendor sent an answer that is not JSON');
    }
    const base = Math.round((at * 1000) / pcm.rate);
    let prevEnd = 0;
    for (const r of results) {
      const alt = r.alternatives?.[0];
      const text = alt?.transcript?.trim() ?? '';
      const start = alt?.words?.length ? durationMs(alt.words[0]!.startTime) : prevEnd;
      prevEnd = durationMs(r.resultEndTime) || prevEnd;
      if (text) out.push({ text, offsetMs: base + start, confidence: alt?.confidence });
    }
  }
  return out;
}

/** The SDK's fetch, through the egress policy: the request made whole, sent by the policy's HTTP client (pinned to the checked address). */
function egressFetch(egress: EgressPolicy): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const req = new Request(input, init);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const res = await egress.fetch(req.url, { method: req.method, headers: Object.fromEntries(req.headers), body, timeoutMs: 120_000, maxBytes: 4 << 20, signal: init?.signal ?? undefined });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    return new Response(res.status === 204 ? null : res.body, { status: res.status, headers });
  };
}

const OPENAI_MAX_BYTES = 25 << 20;

async function openai(pcm: Pcm, language: string, ep: EngineEndpoint, egress: EgressPolicy): Promise<Segment[]> {
  const wav = wavOf(pcm);
  if (wav.length > OPENAI_MAX_BYTES) throw new RecordingEngineError('openai', `the recording is larger than the vendor's 25 MB limit`);
  const client = new OpenAI({ apiKey: ep.apiKey, baseURL: ep.baseUrl, fetch: egressFetch(egress), maxRetries: 0, timeout: 120_000 });
  try {
    const r = await client.audio.transcriptions.create({
      file: await toFile(wav, 'recording.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
      language: language.slice(0, 2).toLowerCase(),
      response_format: 'verbose_json',
      timestamp_granularities: ['segment'],
    });
    const segs = r.segments ?? [];
    if (!segs.length) return r.text.trim() ? [{ text: r.text.trim(), offsetMs: 0 }] : [];
    return segs.filter((s) => s.text.trim()).map((s) => ({ text: s.text.trim(), offsetMs: Math.round(s.start * 1000) }));
  } catch (e) {
    if (e instanceof OpenAI.APIError && typeof e.status === 'number') throw new RecordingEngineError('openai', statusReason(e.status));
    const cause = e instanceof Error && e.cause !== undefined ? e.cause : e;
    throw new RecordingEngineError('openai', netReason(cause));
  }
}

/** The segments `engine` recognises in `pcm`; throws a RecordingEngineError naming the engine. */
export async function transcribeCloud(engine: RecordingEngine, pcm: Pcm, language: string, egress: EgressPolicy, ep: EngineEndpoint = engineEndpoint(engine)): Promise<Segment[]> {
  if (!ep.apiKey) throw new RecordingEngineError(engine, `no API key (${engine === 'google' ? 'GOOGLE_API_KEY' : 'OPENAI_API_KEY'})`);
  return engine === 'google' ? google(pcm, language, ep, egress) : openai(pcm, language, ep, egress);
}

/** Interleaved samples of `channels` as mono (the mean). */
export function monoOf(samples: Int16Array, channels: number): Int16Array {
  if (channels <= 1) return samples;
  const n = Math.floor(samples.length / channels);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += samples[i * channels + c]!;
    out[i] = Math.round(s / channels);
  }
  return out;
}
