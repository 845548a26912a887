// What every vendor stand-in shares: the audio it "synthesises" (a marker tone whose frequency names the
// vendor, as long as the text would take to say), its knobs (key, latency to first byte, failures) and
// the HTTP plumbing. A test that hears 700 Hz on the call knows Cartesia spoke.
import http from 'node:http';
import { listenOnLoopback } from '../loopback-server';

/** The marker frequency of each vendor's stand-in (Hz); all fall on whole Goertzel bins of a 20 ms frame. */
export const MARKER_HZ = { elevenlabs: 500, cartesia: 700, deepgram: 900, openai: 1100, azure: 1300, lmnt: 1500, aws: 1700, google: 1900, rime: 2100, playht: 2300 } as const;
export type StandInVendor = keyof typeof MARKER_HZ;

export interface StandInOptions {
  /** the key the stand-in accepts (others: 401) */
  apiKey?: string;
  /** ms before the first audio byte */
  firstByteMs?: number;
  /** answer every request with this HTTP status instead (429, 500...) */
  failStatus?: number;
  /** after this many requests, fail them all (failStatus or 500): "the vendor fails mid-call" */
  failAfter?: number;
  /** a second tone (Hz) mixed into linear PCM answers (e.g. 6000: heard only on a 16 kHz path) */
  extraHz?: number;
}

export interface StandIn {
  url: string;
  readonly options: StandInOptions;
  /** each request: its path and query, headers and parsed body */
  readonly requests: { url: string; headers: http.IncomingHttpHeaders; body: unknown }[];
  /** performance.now() of each answer's first audio byte (benchmarks: the platform's share after it) */
  readonly firstBytes: number[];
  close(): Promise<void>;
}

/** ms of tone for a text: about what speaking it takes, 300 ms to 3 s. */
export function toneMs(text: string): number {
  return Math.max(300, Math.min(3000, text.length * 40));
}

/** The tone as 16-bit PCM at `rate`. */
export function tonePcm(hz: number, ms: number, rate: number): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/** G.711 µ-law of one sample (the ITU-T table's formula). */
function ulaw(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  let s = Math.min(32635, Math.abs(sample)) + 0x84;
  let exp = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exp > 0; mask >>= 1) exp--;
  const mant = (s >> (exp + 3)) & 0x0f;
  s = ~(sign | (exp << 4) | mant) & 0xff;
  return s;
}

export function toneUlaw(hz: number, ms: number): Buffer {
  const pcm = tonePcm(hz, ms, 8000);
  const b = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i++) b[i] = ulaw(pcm[i]!);
  return b;
}

export function toneS16le(hz: number, ms: number, rate: number, extraHz?: number): Buffer {
  const pcm = tonePcm(hz, ms, rate);
  if (extraHz) {
    const extra = tonePcm(extraHz, ms, rate);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round((pcm[i]! + extra[i]!) / 2);
  }
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whether this request should fail (failStatus, or failAfter reached): the status, else 0. */
export function failureFor(o: StandInOptions, served: number): number {
  if (o.failStatus) return o.failStatus;
  if (o.failAfter !== undefined && served > o.failAfter) return 500;
  return 0;
}

/** How a vendor refuses a request in its own words (status, body, headers); `false` from auth: 401 {"detail":...}. */
export interface Refusal {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/**
 * An HTTP stand-in: `auth(req, raw)` says whether the key is right (or how the vendor refuses it);
 * `audio(body)` is the answer, sent in 20 ms chunks after firstByteMs (as a vendor streams while it
 * synthesises).
 */
export async function httpStandIn(
  options: StandInOptions,
  route: (method: string, path: string) => boolean,
  auth: (req: http.IncomingMessage, raw: Buffer) => boolean | Refusal,
  audio: (body: unknown, query: URLSearchParams, req: http.IncomingMessage) => { contentType: string; bytes: Buffer; chunk: number } | string,
): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  const firstBytes: number[] = [];
  let served = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const bytes = Buffer.concat(chunks);
      const raw = bytes.toString('utf8');
      let body: unknown = raw; // not JSON (SSML): the text as it came
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      requests.push({ url: req.url ?? '', headers: req.headers, body });
      const u = new URL(req.url ?? '/', 'http://x');
      if (!route(req.method ?? '', u.pathname)) return void res.writeHead(404).end();
      const ok = auth(req, bytes);
      if (ok === false) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"invalid api key"}');
      if (ok !== true) return void res.writeHead(ok.status, { 'content-type': 'application/json', ...ok.headers }).end(ok.body);
      const fail = failureFor(options, ++served);
      if (fail) return void res.writeHead(fail, { 'content-type': 'application/json' }).end('{"error":"stand-in failure"}');
      const a = audio(body, u.searchParams, req);
      if (typeof a === 'string') return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: a }));
      await sleep(options.firstByteMs ?? 0);
      res.writeHead(200, { 'content-type': a.contentType, 'transfer-encoding': 'chunked' });
      for (let i = 0; i < a.bytes.length && !res.destroyed; i += a.chunk) {
        res.write(a.bytes.subarray(i, i + a.chunk));
        if (i === 0) {
          firstBytes.push(performance.now());
          await sleep(1);
        }
      }
      res.end();
    });
  });
  const listening = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listening.port}`, options, requests, firstBytes, close: listening.close };
}
