/**
 * A local OpenAI-compatible server answering deterministically, for tests and benchmarks:
 * POST /chat/completions (streamed as SSE when `stream: true`, with tool calls split across deltas
 * the way real providers send them) and POST /embeddings (hashed bag of words, normalised, so
 * texts sharing words are close). Requests are kept in `requests` for assertions.
 *
 *   const llm = await startLlmServer({ respond: (req) => ({ text: 'Hi there.' }) });
 *   llm.url  // http://127.0.0.1:<port>/v1
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LlmRequest {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
}

export interface LlmReply {
  text?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
  /** HTTP error status instead of an answer */
  status?: number;
}

export interface LlmServerOptions {
  respond?: (req: LlmRequest) => LlmReply;
  /** delay before the first chunk and between chunks, ms */
  firstChunkDelayMs?: number;
  chunkDelayMs?: number;
  /** required bearer key (401 otherwise) */
  apiKey?: string;
  /** loopback address to listen on (default 127.0.0.1) */
  host?: string;
}

export interface LlmServer {
  url: string;
  requests: LlmRequest[];
  /** streamed requests the client closed before the answer's end (an aborted request) */
  aborted: LlmRequest[];
  embeddingRequests: { model: string; input: string[] }[];
  authHeaders: string[];
  options: LlmServerOptions;
  close(): Promise<void>;
}

export const EMBED_DIM = 64;

export function embedText(text: string): number[] {
  const v = new Array<number>(EMBED_DIM).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (w.length < 3) continue;
    let h = 2166136261;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0;
    v[h % EMBED_DIM] += 1;
  }
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / n);
}

export function lastUser(req: LlmRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) if (req.messages[i]!.role === 'user') return req.messages[i]!.content ?? '';
  return '';
}

const defaultRespond = (req: LlmRequest): LlmReply => {
  const last = req.messages[req.messages.length - 1];
  if (last?.role === 'tool') return { text: 'Done.' };
  const u = lastUser(req);
  return { text: u ? `You said ${u}. Thank you for calling.` : 'Hello. How can I help you today?' };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startLlmServer(options: LlmServerOptions = {}): Promise<LlmServer> {
  const requests: LlmRequest[] = [];
  const aborted: LlmRequest[] = [];
  const embeddingRequests: { model: string; input: string[] }[] = [];
  const authHeaders: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => void handle(req, res, body).catch(() => res.destroy()));
  });
  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    authHeaders.push(String(req.headers.authorization ?? ''));
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad key' } }));
      return;
    }
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(body) as Record<string, unknown>;
    } catch {
      res.writeHead(400).end('{"error":{"message":"bad json"}}');
      return;
    }
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      const input = (Array.isArray(json.input) ? json.input : [json.input]).map(String);
      embeddingRequests.push({ model: String(json.model), input });
      return answerEmbeddings(res, input, json.model);
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end('{"error":{"message":"not found"}}');
      return;
    }
    const r = json as unknown as LlmRequest;
    requests.push(r);
    const reply = (options.respond ?? defaultRespond)(r);
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'scripted failure' } }));
      return;
    }
    const calls = (reply.tool_calls ?? []).map((c, i) => ({ id: `call_${requests.length}_${i}`, name: c.name, args: JSON.stringify(c.arguments) }));
    if (!r.stream) return answerCompletion(res, reply, calls);
    res.on('close', () => {
      if (!res.writableFinished) aborted.push(r);
    });
    await streamCompletion(res, reply, calls, options);
  }
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/v1`,
    requests,
    aborted,
    embeddingRequests,
    authHeaders,
    options,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type ToolCall = { id: string; name: string; args: string };

function answerEmbeddings(res: http.ServerResponse, input: string[], model: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: input.map((t, index) => ({ object: 'embedding', index, embedding: embedText(t) })), model }));
}

/** The whole reply in one chat.completion. */
function answerCompletion(res: http.ServerResponse, reply: LlmReply, calls: ToolCall[]): void {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.text ?? null };
  if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } }));
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ id: 'cmpl', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }] }));
}

/** The reply as server-sent chunks: a word each, then each tool call's arguments in two halves, then the finish and [DONE]. */
async function streamCompletion(res: http.ServerResponse, reply: LlmReply, calls: ToolCall[], options: LlmServerOptions): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (delta: Record<string, unknown>, finish: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'cmpl', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  if (options.firstChunkDelayMs) await sleep(options.firstChunkDelayMs);
  send({ role: 'assistant', content: '' });
  const words = (reply.text ?? '').match(/\S+\s*/g) ?? [];
  for (const w of words) {
    if (res.destroyed) return;
    send({ content: w });
    if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
  }
  calls.forEach((c, index) => {
    const half = Math.floor(c.args.length / 2);
    send({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.args.slice(0, half) } }] });
    send({ tool_calls: [{ index, function: { arguments: c.args.slice(half) } }] });
  });
  send({}, calls.length ? 'tool_calls' : 'stop');
  res.end('data: [DONE]\n\n');
}
