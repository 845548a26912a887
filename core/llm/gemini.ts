/**
 * `gemini.<model>` through Gemini's own API (not its OpenAI-compatible shim), with Google's official
 * SDK (`@google/genai`): `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, the key in
 * `x-goog-api-key`. Every request goes through the egress policy: the SDK takes a custom fetch
 * (`httpOptions.fetch`), which here is core/net's policy fetch (checked, pinned address; one
 * deadline; a bounded body). The chat messages map to Gemini's shapes: system messages →
 * `systemInstruction`, assistant → `model` turns with `functionCall` parts, tool results → `user`
 * turns with `functionResponse` parts; tools → `tools[0].functionDeclarations`.
 */
import { ApiError, GoogleGenAI, type Content, type FunctionCall, type GenerateContentResponse, type Part } from '@google/genai';
import { EgressFailed, EgressRefused, type EgressPolicy } from '../net';
import { policyFetch } from '../net/fetch';
import { completion, LlmError, type ChatChunk, type ChatLlm, type ChatMessage, type ChatRequest, type LlmEndpoint, type ToolCall, type ToolDef } from './client';

const TIMEOUT_MS = 60_000;
const MAX_BYTES = 32 * 1024 * 1024;
/** Ids made here for calls Gemini sent without one: never sent back as if Gemini had named them. */
const LOCAL_ID = 'gemini-local-';

/** What Gemini is sent for a conversation (exported for the tests of the mapping). */
export function toGemini(messages: ChatMessage[]): { systemInstruction: string; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  const names = new Map<string, string>();
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (!parts.length) return;
    const last = contents.at(-1);
    // consecutive turns of one role are one content (a round's function responses travel together)
    if (last && last.role === role) last.parts!.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of messages) {
    if (m.role === 'system') {
      if (m.content) system.push(m.content);
    } else if (m.role === 'user') {
      push('user', m.content ? [{ text: m.content }] : []);
    } else if (m.role === 'assistant') {
      const parts: Part[] = m.content ? [{ text: m.content }] : [];
      for (const c of m.tool_calls ?? []) {
        names.set(c.id, c.function.name);
        const call: FunctionCall = { name: c.function.name, args: parseArgs(c.function.arguments) };
        if (!c.id.startsWith(LOCAL_ID)) call.id = c.id;
        parts.push({ functionCall: call });
      }
      push('model', parts);
    } else {
      const id = m.tool_call_id ?? '';
      const response: Part['functionResponse'] = { name: names.get(id) ?? 'unknown', response: { result: m.content ?? '' } };
      if (id && !id.startsWith(LOCAL_ID)) response.id = id;
      push('user', [{ functionResponse: response }]);
    }
  }
  // Gemini needs a turn to answer: an opening (no conversation yet) sends its last instruction as one
  if (!contents.length && system.length > 1) contents.push({ role: 'user', parts: [{ text: system.pop()! }] });
  return { systemInstruction: system.join('\n\n'), contents };
}

function parseArgs(s: string): Record<string, unknown> {
  try {
    const v = s ? (JSON.parse(s) as unknown) : {};
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function declarations(tools: ToolDef[]) {
  return tools.map((t) => ({ name: t.function.name, description: t.function.description, parametersJsonSchema: t.function.parameters }));
}

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  BLOCKLIST: 'content_filter',
  SPII: 'content_filter',
};

/**
 * The error as the flow and the events show it: the status, Google's canonical code and, for a
 * refused key, that it was the key. Never the answer's own text (the URL may be an allowlisted
 * internal server).
 */
export function geminiHttpError(e: ApiError): LlmError {
  let code = '';
  let keyRefused = e.status === 401 || e.status === 403;
  try {
    const body = JSON.parse(e.message) as { error?: { status?: unknown; details?: { reason?: unknown }[] } };
    const s = body.error?.status;
    if (typeof s === 'string' && /^[A-Z_]{1,40}$/.test(s)) code = s;
    if (code === 'UNAUTHENTICATED' || code === 'PERMISSION_DENIED') keyRefused = true;
    if ((body.error?.details ?? []).some((d) => d && (d.reason === 'API_KEY_INVALID' || d.reason === 'API_KEY_SERVICE_BLOCKED'))) keyRefused = true;
  } catch {
    // not Google's JSON error: the status says enough
  }
  const why = keyRefused ? ': the API key was refused' : e.status === 429 ? ': rate limited' : '';
  return new LlmError('HTTP', `Gemini API answered HTTP ${e.status}${code ? ` ${code}` : ''}${why}`, e.status);
}

export class GeminiClient implements ChatLlm {
  private readonly sdk: GoogleGenAI;

  constructor(
    readonly endpoint: LlmEndpoint,
    egress: EgressPolicy,
  ) {
    // without a key the SDK would look for Google credentials of its own (environment, metadata server)
    if (!endpoint.apiKey) throw new LlmError('NOT_CONFIGURED', "gemini.* needs an API key: set the AI's engine_key or GEMINI_API_KEY on the server");
    this.sdk = new GoogleGenAI({
      vertexai: false,
      apiKey: endpoint.apiKey,
      httpOptions: { baseUrl: endpoint.baseUrl, fetch: policyFetch(egress, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES }) },
    });
  }

  get label(): string {
    return `gemini.${this.endpoint.model}`;
  }

  async *stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
    const { systemInstruction, contents } = toGemini(req.messages);
    const config: Record<string, unknown> = { abortSignal: req.signal };
    if (systemInstruction) config.systemInstruction = systemInstruction;
    if (req.tools?.length) config.tools = [{ functionDeclarations: declarations(req.tools) }];
    if (req.temperature !== undefined) config.temperature = req.temperature;
    let chunks: AsyncGenerator<GenerateContentResponse>;
    try {
      chunks = await this.sdk.models.generateContentStream({ model: this.endpoint.model, contents, config });
    } catch (e) {
      throw this.failure(e, req.signal);
    }
    const calls: ToolCall[] = [];
    let finish = '';
    try {
      for await (const r of chunks) {
        const cand = r.candidates?.[0];
        for (const part of cand?.content?.parts ?? []) {
          // a thinking model's thoughts are not the answer
          if (part.thought) continue;
          if (typeof part.text === 'string' && part.text) yield { type: 'text', text: part.text };
          const fc = part.functionCall;
          if (fc?.name) calls.push({ id: fc.id || `${LOCAL_ID}${calls.length}`, type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) } });
        }
        if (cand?.finishReason) finish = FINISH[cand.finishReason] ?? 'stop';
      }
    } catch (e) {
      throw this.failure(e, req.signal);
    }
    if (calls.length) yield { type: 'tool_calls', calls };
    yield { type: 'done', finish_reason: calls.length ? 'tool_calls' : finish || 'stop' };
  }

  async complete(req: ChatRequest): Promise<{ content: string; tool_calls: ToolCall[] }> {
    return completion(this.stream(req));
  }

  private failure(e: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return e;
    if (e instanceof LlmError) return e;
    if (e instanceof ApiError) return geminiHttpError(e);
    if (e instanceof EgressRefused) return new LlmError('REFUSED', `LLM endpoint refused: ${e.message}`);
    // transport failures (core/net says them without the remote's words) and broken streams
    if (e instanceof EgressFailed) return new LlmError('NETWORK', `LLM endpoint unreachable: ${e.message}`);
    return new LlmError('PROTOCOL', 'Gemini API sent a stream that is not valid');
  }
}
