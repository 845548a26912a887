/**
 * Gemini API stand-in (ai.google.dev/api: models.streamGenerateContent, models.generateContent):
 *   POST /v1beta/models/{model}:streamGenerateContent?alt=sse  → SSE, one GenerateContentResponse per
 *        `data:` event (events end with CRLF CRLF), the last with finishReason;
 *   POST /v1beta/models/{model}:generateContent                 → one GenerateContentResponse.
 * The key in `x-goog-api-key` (or `?key=`); a wrong one answers 400 INVALID_ARGUMENT with the
 * ErrorInfo reason API_KEY_INVALID, as Gemini does. Function calls are `functionCall` parts, sent
 * whole in one chunk; a thinking model's `thought` parts come first. Errors on demand (401, 403
 * PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 5xx) in Google's error JSON; time to first chunk
 * configurable. Requests are kept for assertions.
 *
 *   const g = await startGemini({ respond: (req) => ({ text: 'Hi.' }) });
 *   g.url  // http://127.0.0.1:<port>   (GEMINI_BASE_URL / engine_url)
 */
import http from 'node:http';
import { listenOnLoopback } from '../loopback-server';

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}
export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
}
export interface GeminiRequest {
  model: string;
  stream: boolean;
  apiKey: string;
  contents: GeminiContent[];
  systemInstruction?: { role?: string; parts: GeminiPart[] };
  tools?: { functionDeclarations?: { name: string; description?: string; parameters?: unknown; parametersJsonSchema?: unknown }[] }[];
  generationConfig?: Record<string, unknown>;
}
export interface GeminiReply {
  text?: string;
  /** thinking parts sent before the answer (never to be spoken) */
  thought?: string;
  function_calls?: { name: string; args: Record<string, unknown>; id?: string }[];
  /** an HTTP error in Google's shape instead of an answer */
  status?: number;
}
export interface GeminiOptions {
  respond?: (req: GeminiRequest) => GeminiReply;
  apiKey?: string;
  firstChunkDelayMs?: number;
  chunkDelayMs?: number;
}
export interface GeminiStandIn {
  url: string;
  requests: GeminiRequest[];
  options: GeminiOptions;
  close(): Promise<void>;
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function googleError(res: http.ServerResponse, code: number, message: string, reason?: string): void {
  const error: Record<string, unknown> = { code, message, status: STATUS[code] ?? 'UNKNOWN' };
  if (reason) error.details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }];
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ error }));
}

const defaultRespond = (req: GeminiRequest): GeminiReply => {
  const last = req.contents.at(-1);
  if (last?.parts.some((p) => p.functionResponse)) return { text: 'Done.' };
  const said = last?.parts.map((p) => p.text ?? '').join('') ?? '';
  return { text: said ? `You said ${said}. Thank you for calling.` : 'Hello. How can I help you today?' };
};

/** The text of the latest user turn (not a function response). */
export function lastUserText(req: GeminiRequest): string {
  for (let i = req.contents.length - 1; i >= 0; i--) {
    const c = req.contents[i]!;
    if (c.role === 'user' && c.parts.some((p) => typeof p.text === 'string')) return c.parts.map((p) => p.text ?? '').join('');
  }
  return '';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startGemini(options: GeminiOptions = {}): Promise<GeminiStandIn> {
  const requests: GeminiRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => void handle(req, res, body).catch(() => res.destroy()));
  });
  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return googleError(res, 404, 'Requested entity was not found.');
    const stream = m[2] === 'streamGenerateContent';
    if (stream && url.searchParams.get('alt') !== 'sse') return googleError(res, 400, 'this stand-in streams as SSE only (alt=sse)');
    const apiKey = String(req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? '');
    if (apiKey !== (options.apiKey ?? 'gemini-test-key')) return googleError(res, 400, 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
    let json: Omit<GeminiRequest, 'model' | 'stream' | 'apiKey'>;
    try {
      json = JSON.parse(body) as typeof json;
    } catch {
      return googleError(res, 400, 'Invalid JSON payload received.');
    }
    if (!Array.isArray(json.contents) || !json.contents.length) return googleError(res, 400, '* GenerateContentRequest.contents: contents is not specified');
    const r: GeminiRequest = { ...json, model: decodeURIComponent(m[1]!), stream, apiKey };
    requests.push(r);
    const reply = (options.respond ?? defaultRespond)(r);
    if (reply.status) return googleError(res, reply.status, 'scripted failure', reply.status === 403 ? 'API_KEY_SERVICE_BLOCKED' : undefined);
    const chunks: GeminiPart[][] = [];
    if (reply.thought) chunks.push([{ text: reply.thought, thought: true }]);
    for (const w of (reply.text ?? '').match(/\S+\s*/g) ?? []) chunks.push([{ text: w }]);
    const calls = (reply.function_calls ?? []).map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args } }));
    if (calls.length) chunks.push(calls);
    const response = (parts: GeminiPart[], last: boolean) => ({
      candidates: [{ content: { parts, role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: chunks.length, totalTokenCount: 10 + chunks.length } } : {}),
      modelVersion: r.model,
      responseId: `resp-${requests.length}`,
    });
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(response(chunks.flat(), true)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (options.firstChunkDelayMs) await sleep(options.firstChunkDelayMs);
    if (!chunks.length) chunks.push([{ text: '' }]);
    for (let i = 0; i < chunks.length; i++) {
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(response(chunks[i]!, i === chunks.length - 1))}\r\n\r\n`);
      if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
    }
    res.end();
  }
  const listening = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listening.port}`, requests, options, close: listening.close };
}
