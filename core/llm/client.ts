/**
 * The LLM provider interface: the OpenAI-compatible chat-completions protocol (streamed as
 * server-sent events, with tool calls) and embeddings. Any compatible endpoint works (OpenAI,
 * Gemini's and Grok's compatibility endpoints, vLLM, llama.cpp, Ollama...).
 */
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

export type ChatChunk =
  | { type: 'text'; text: string }
  | { type: 'tool_calls'; calls: ToolCall[] }
  | { type: 'done'; finish_reason: string };

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDef[];
  signal?: AbortSignal;
  temperature?: number;
}

export class LlmError extends Error {
  constructor(readonly code: 'NOT_CONFIGURED' | 'HTTP' | 'PROTOCOL' | 'NETWORK', message: string, readonly status?: number) {
    super(message);
    this.name = 'LlmError';
  }
}

const TIMEOUT_MS = 60_000;

export class LlmClient {
  constructor(readonly endpoint: LlmEndpoint) {}

  private async post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const url = this.endpoint.baseUrl.replace(/\/+$/, '') + path;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.endpoint.apiKey) headers.authorization = `Bearer ${this.endpoint.apiKey}`;
    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new LlmError('NETWORK', `LLM endpoint ${url} unreachable: ${(e as Error).message}`);
    }
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).slice(0, 300);
      throw new LlmError('HTTP', `LLM endpoint answered ${res.status}: ${text}`, res.status);
    }
    return res;
  }

  /** Streams a chat completion: text deltas as they come, then the tool calls (if any), then done. */
  async *stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
    const body: Record<string, unknown> = { model: this.endpoint.model, messages: req.messages, stream: true };
    if (req.tools?.length) body.tools = req.tools;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    const res = await this.post('/chat/completions', body, req.signal);
    if (!res.body) throw new LlmError('PROTOCOL', 'LLM endpoint sent no body');
    const calls: ToolCall[] = [];
    let finish = '';
    const decoder = new TextDecoder();
    let buf = '';
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(part, { stream: true });
      let i: number;
      // events are separated by a blank line; each carries `data:` lines
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const event = buf.slice(0, i);
        buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
        const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
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
          throw new LlmError('PROTOCOL', `LLM endpoint sent an event that is not JSON: ${data.slice(0, 100)}`);
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
    let content = '';
    let tool_calls: ToolCall[] = [];
    for await (const c of this.stream(req)) {
      if (c.type === 'text') content += c.text;
      else if (c.type === 'tool_calls') tool_calls = c.calls;
    }
    return { content, tool_calls };
  }

  /** Embeddings of texts, in order. */
  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    const res = await this.post('/embeddings', { model: this.endpoint.embeddingModel || 'text-embedding-3-small', input: texts }, signal);
    const json = (await res.json()) as { data?: { index?: number; embedding: number[] }[] };
    if (!Array.isArray(json.data) || json.data.length !== texts.length) throw new LlmError('PROTOCOL', 'embeddings response does not match the input');
    const out: number[][] = new Array(texts.length);
    json.data.forEach((d, i) => (out[d.index ?? i] = d.embedding));
    return out;
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
