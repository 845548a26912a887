/**
 * The LLM provider interface (`ChatLlm`) and its OpenAI-compatible implementation: the
 * chat-completions protocol (streamed as server-sent events, with tool calls) and embeddings. Any
 * compatible endpoint works (OpenAI, xAI, vLLM, llama.cpp, Ollama...); Gemini's own API is
 * gemini.ts, the fallback by choice fallback.ts.
 */
import { EgressRefused, type EgressPolicy, type EgressStream } from '../net';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

export interface ToolDef {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface LlmEndpoint {
  /** e.g. https://api.openai.com/v1 (paths /chat/completions and /embeddings are appended) */
  baseUrl: string;
  model: string;
  apiKey: string;
  /** model for /embeddings (default: the endpoint's default embedding model name) */
  embeddingModel?: string;
}

export type ChatChunk = { type: 'text'; text: string } | { type: 'tool_calls'; calls: ToolCall[] } | { type: 'done'; finish_reason: string };

/** A streamed answer read whole: its text and its last tool calls (every ChatLlm's `complete`). */
export async function completion(stream: AsyncIterable<ChatChunk>): Promise<{ content: string; tool_calls: ToolCall[] }> {
  let content = '';
  let tool_calls: ToolCall[] = [];
  for await (const c of stream) {
    if (c.type === 'text') content += c.text;
    else if (c.type === 'tool_calls') tool_calls = c.calls;
  }
  return { content, tool_calls };
}

/** A chat model the conversation engine talks to, whatever its vendor's protocol. */
export interface ChatLlm {
  /** `target.model` as the events name it (e.g. gemini.gemini-2.5-flash) */
  readonly label: string;
  /** Text pieces as they come, then the tool calls (if any), then done. */
  stream(req: ChatRequest): AsyncGenerator<ChatChunk>;
  /** A whole completion (summaries, prompt proposals, text conversations). */
  complete(req: ChatRequest): Promise<{ content: string; tool_calls: ToolCall[] }>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDef[];
  signal?: AbortSignal;
  temperature?: number;
}

export class LlmError extends Error {
  constructor(
    readonly code: 'NOT_CONFIGURED' | 'HTTP' | 'PROTOCOL' | 'NETWORK' | 'REFUSED',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

const TIMEOUT_MS = 60_000;
/** Largest answer read from the endpoint (a long streamed completion, a batch of embeddings). */
const MAX_BYTES = 32 * 1024 * 1024;

export class LlmClient implements ChatLlm {
  /** Every request goes through `egress` (core/net): the engine URL is customer input. */
  constructor(
    readonly endpoint: LlmEndpoint,
    private readonly egress: EgressPolicy,
    readonly label: string = endpoint.model,
  ) {}

  private async post(path: string, body: unknown, signal?: AbortSignal): Promise<EgressStream> {
    const url = this.endpoint.baseUrl.replace(/\/+$/, '') + path;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.endpoint.apiKey) headers.authorization = `Bearer ${this.endpoint.apiKey}`;
    let res: EgressStream;
    try {
      res = await this.egress.open(url, { method: 'POST', headers, body: JSON.stringify(body), signal, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
    } catch (e) {
      if (signal?.aborted) throw e;
      if (e instanceof EgressRefused) throw new LlmError('REFUSED', `LLM endpoint refused: ${e.message}`);
      throw new LlmError('NETWORK', `LLM endpoint unreachable: ${(e as Error).message}`);
    }
    if (res.status < 200 || res.status > 299) {
      // the answer itself is not echoed: the status says enough, and whether it was the key
      const refused = res.status === 401 || res.status === 403 || (res.status === 400 && (await keyRefusedIn(res)));
      res.close();
      const why = refused ? ': the API key was refused' : res.status === 429 ? ': rate limited' : '';
      throw new LlmError('HTTP', `LLM endpoint answered HTTP ${res.status}${why}`, res.status);
    }
    return res;
  }

  /** Streams a chat completion: text deltas as they come, then the tool calls (if any), then done. */
  async *stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
    const body: Record<string, unknown> = { model: this.endpoint.model, messages: req.messages, stream: true };
    if (req.tools?.length) body.tools = req.tools;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    const res = await this.post('/chat/completions', body, req.signal);
    const calls: ToolCall[] = [];
    let finish = '';
    const decoder = new TextDecoder();
    let buf = '';
    for await (const part of bodyOf(res, req.signal)) {
      buf += decoder.decode(part, { stream: true });
      let i: number;
      // events are separated by a blank line; each carries `data:` lines
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const event = buf.slice(0, i);
        buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
        const data = event
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (!data) continue;
        if (data === '[DONE]') {
          if (calls.length) yield { type: 'tool_calls', calls };
          yield { type: 'done', finish_reason: finish || 'stop' };
          return;
        }
        let json: StreamPayload;
        try {
          json = JSON.parse(data) as StreamPayload;
        } catch {
          // the content is not shown: the endpoint may be an allowlisted internal server
          throw new LlmError('PROTOCOL', 'LLM endpoint sent an event that is not JSON');
        }
        const choice = json.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content) yield { type: 'text', text: delta.content };
        for (const tc of delta.tool_calls ?? []) {
          const idx = tc.index ?? calls.length;
          const c = (calls[idx] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (tc.id) c.id = tc.id;
          if (tc.function?.name) c.function.name += tc.function.name;
          if (tc.function?.arguments) c.function.arguments += tc.function.arguments;
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    // a server that closes without [DONE] still ends the turn
    if (calls.length) yield { type: 'tool_calls', calls };
    yield { type: 'done', finish_reason: finish || 'stop' };
  }

  /** A whole completion (summaries, prompt proposals, text conversations). */
  async complete(req: ChatRequest): Promise<{ content: string; tool_calls: ToolCall[] }> {
    return completion(this.stream(req));
  }

  /** Embeddings of texts, in order. */
  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    const res = await this.post('/embeddings', { model: this.endpoint.embeddingModel || 'text-embedding-3-small', input: texts }, signal);
    const parts: Buffer[] = [];
    for await (const c of bodyOf(res, signal)) parts.push(c);
    let json: { data?: { index?: number; embedding: number[] }[] };
    try {
      json = JSON.parse(Buffer.concat(parts).toString('utf8')) as typeof json;
    } catch {
      throw new LlmError('PROTOCOL', 'embeddings response is not JSON');
    }
    if (!Array.isArray(json.data) || json.data.length !== texts.length) throw new LlmError('PROTOCOL', 'embeddings response does not match the input');
    const out: number[][] = new Array(texts.length);
    json.data.forEach((d, i) => (out[d.index ?? i] = d.embedding));
    return out;
  }
}

/**
 * xAI answers a wrong key with HTTP 400 (not 401): `{"code": "...", "error": "Incorrect API key
 * provided: ..."}`. Read (at most 4 KiB) only to tell that case apart; never shown.
 */
async function keyRefusedIn(res: EgressStream): Promise<boolean> {
  let text = '';
  try {
    for await (const c of res.body) {
      text += c.toString('utf8');
      if (text.length > 4096) break;
    }
  } catch {
    return false;
  }
  return /incorrect api key|invalid api key|api key not valid/i.test(text);
}

/** The body; a cut-off or oversized answer is an LlmError (a cancel by the caller stays what it is). */
async function* bodyOf(res: EgressStream, signal: AbortSignal | undefined): AsyncGenerator<Buffer> {
  try {
    yield* res.body;
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new LlmError('NETWORK', `LLM endpoint answer broke off: ${(e as Error).message}`);
  }
}

interface StreamPayload {
  choices?: {
    delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] };
    finish_reason?: string | null;
  }[];
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
