/**
 * xAI API stand-in (docs.x.ai: chat completions, OpenAI-compatible) with what xAI does differently:
 *   - POST /v1/chat/completions, `Authorization: Bearer <key>`; a wrong key answers HTTP 400 (not 401)
 *     with `{"code": "Client specified an invalid argument", "error": "Incorrect API key provided: ..."}`;
 *   - reasoning models (grok-3-mini, grok-4...) stream `reasoning_content` deltas before the answer,
 *     and refuse `presence_penalty`, `frequency_penalty` and `stop` with HTTP 400;
 *   - a function call comes whole in one chunk (not split across deltas);
 *   - the stream ends with a usage chunk whose `choices` is empty, then `data: [DONE]`.
 * 429 and 5xx on demand; time to first chunk configurable; requests kept for assertions.
 */
import http from 'node:http';
import type { LlmReply, LlmRequest } from '../llm-server';
import { listenOnLoopback } from '../loopback-server';

export interface XaiOptions {
  respond?: (req: LlmRequest) => LlmReply & { reasoning?: string };
  apiKey?: string;
  firstChunkDelayMs?: number;
}
export interface XaiStandIn {
  /** base URL, …/v1 (XAI_BASE_URL) */
  url: string;
  requests: (LlmRequest & Record<string, unknown>)[];
  options: XaiOptions;
  close(): Promise<void>;
}

const REASONING = /grok-3-mini|grok-4/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startXai(options: XaiOptions = {}): Promise<XaiStandIn> {
  const requests: XaiStandIn['requests'] = [];
  const fail = (res: http.ServerResponse, status: number, code: string, error: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code, error }));
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => void handle(req, res, body).catch(() => res.destroy()));
  });
  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return fail(res, 404, 'Not found', 'No handler found for this route');
    const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (key !== (options.apiKey ?? 'xai-test-key')) {
      return fail(res, 400, 'Client specified an invalid argument', `Incorrect API key provided: ${key.slice(0, 2)}***${key.slice(-2)}. You can obtain an API key from https://console.x.ai.`);
    }
    let r: LlmRequest & Record<string, unknown>;
    try {
      r = JSON.parse(body) as typeof r;
    } catch {
      return fail(res, 400, 'Client specified an invalid argument', 'Failed to deserialize the JSON body');
    }
    requests.push(r);
    if (REASONING.test(r.model)) {
      for (const k of ['presence_penalty', 'frequency_penalty', 'stop']) {
        if (r[k] !== undefined) return fail(res, 400, 'Client specified an invalid argument', `Argument not supported on this model: ${k}`);
      }
    }
    const reply: LlmReply & { reasoning?: string } = options.respond ? options.respond(r) : { text: 'Hello from Grok.' };
    if (reply.status) return fail(res, reply.status, reply.status === 429 ? 'Too many requests' : 'Internal error', 'scripted failure');
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const id = `xai-${requests.length}`;
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: r.model, choices, system_fingerprint: 'fp_standin', ...extra })}\n\n`);
    const delta = (d: Record<string, unknown>, finish: string | null = null) => send([{ index: 0, delta: d, finish_reason: finish }]);
    if (options.firstChunkDelayMs) await sleep(options.firstChunkDelayMs);
    delta({ role: 'assistant' });
    if (REASONING.test(r.model)) for (const w of (reply.reasoning ?? 'Thinking about it.').match(/\S+\s*/g) ?? []) delta({ reasoning_content: w });
    for (const w of (reply.text ?? '').match(/\S+\s*/g) ?? []) delta({ content: w });
    const calls = (reply.tool_calls ?? []).map((c, index) => ({ id: `call_${requests.length}_${index}`, type: 'function', index, function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    if (calls.length) delta({ tool_calls: calls });
    delta({}, calls.length ? 'tool_calls' : 'stop');
    send([], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    res.end('data: [DONE]\n\n');
  }
  const listening = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${listening.port}/v1`, requests, options, close: listening.close };
}
