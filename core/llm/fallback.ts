/**
 * Fallback by choice: an AI's `parameter.llm_fallback` names a second chat model, used when the
 * first fails before its first token (any LlmError: HTTP error, refused key, rate limit, egress
 * refusal, unreachable) or its first token is slower than `parameter.llm_first_token_ms`. Once
 * fallen back, the conversation stays on the fallback (no deadline paid again each turn), and
 * `onFallback` says so once. A failure after the first token is the turn's error: words already
 * spoken cannot be taken back. Without llm_fallback nothing is ever replaced.
 */
import { invalidArgument } from '../errors';
import { realtimeModel, checkEngineModel } from '../speech/voices';
import { completion, LlmError, type ChatChunk, type ChatLlm, type ChatRequest, type ToolCall } from './client';
import { maskKey, type EngineConfig } from './endpoint';
import { engineKeyDestination, refuseMovedSecret } from '../secrets/key-destination';

export interface LlmFallbackInfo {
  /** engine_model of the first and of the fallback */
  from: string;
  to: string;
  reason: 'error' | 'slow';
  /** what went wrong (the LlmError's message, or the deadline) */
  message: string;
}

export interface LlmFallbackSettings {
  fallback: EngineConfig;
  /** deadline for the first token, ms; null: only a failure falls back */
  firstTokenMs: number | null;
}

const MIN_MS = 100;
const MAX_MS = 30_000;

function fallbackObject(v: unknown): EngineConfig | null {
  if (typeof v === 'string') return v ? { engine_model: v } : null;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const out: EngineConfig = {};
  if (typeof o.engine_model === 'string') out.engine_model = o.engine_model;
  if (typeof o.engine_url === 'string') out.engine_url = o.engine_url;
  if (typeof o.engine_key === 'string') out.engine_key = o.engine_key;
  return out;
}

/**
 * `parameter.llm_fallback` ("target.model" or { engine_model, engine_url, engine_key }) and
 * `parameter.llm_first_token_ms` (100-30000, only with a fallback): 400 INVALID_ARGUMENT naming the
 * field otherwise. Returns the fallback's engine_url (the caller checks it like engine_url).
 */
export function checkLlmParameter(p: Record<string, unknown> | undefined): { engineUrl: string } {
  const f = 'parameter.llm_fallback';
  const fb = p?.llm_fallback;
  const ms = p?.llm_first_token_ms;
  let engineUrl = '';
  if (fb !== undefined && fb !== '') {
    const o = fallbackObject(fb);
    if (!o || !o.engine_model) throw invalidArgument(`${f} must be an engine_model ("target.model") or { engine_model, engine_url, engine_key }`, [{ field: f, issue: 'not an engine' }]);
    const raw = fb as Record<string, unknown>;
    for (const k of ['engine_url', 'engine_key'] as const) {
      if (typeof fb === 'object' && raw[k] !== undefined && typeof raw[k] !== 'string') throw invalidArgument(`${f}.${k} must be a string`, [{ field: `${f}.${k}`, issue: 'not a string' }]);
    }
    checkEngineModel(`${f}.engine_model`, o.engine_model);
    if (!o.engine_model.includes('.'))
      throw invalidArgument(`${f}.engine_model "${o.engine_model}" must be target.model (e.g. openai.gpt-4o-mini)`, [{ field: `${f}.engine_model`, issue: 'no target' }]);
    if (realtimeModel(o.engine_model))
      throw invalidArgument(`${f}.engine_model "${o.engine_model}" is a speech-to-speech model; a fallback must be a chat model`, [{ field: `${f}.engine_model`, issue: 'not a chat model' }]);
    engineUrl = o.engine_url ?? '';
  }
  if (ms !== undefined) {
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < MIN_MS || ms > MAX_MS) {
      throw invalidArgument(`parameter.llm_first_token_ms must be a whole number of ms from ${MIN_MS} to ${MAX_MS}`, [{ field: 'parameter.llm_first_token_ms', issue: 'out of range' }]);
    }
    if (fb === undefined || fb === '')
      throw invalidArgument('parameter.llm_first_token_ms needs parameter.llm_fallback: without a fallback there is nothing to switch to', [
        { field: 'parameter.llm_first_token_ms', issue: 'no fallback' },
      ]);
  }
  return { engineUrl };
}

/** The settings of an AI's parameter (already checked when stored); null without a fallback. */
export function llmFallbackOf(p: Record<string, unknown> | null | undefined): LlmFallbackSettings | null {
  const fallback = fallbackObject(p?.llm_fallback);
  if (!fallback?.engine_model || realtimeModel(fallback.engine_model)) return null;
  const ms = p?.llm_first_token_ms;
  return { fallback, firstTokenMs: typeof ms === 'number' && ms > 0 ? ms : null };
}

/** `parameter` as shown: `llm_fallback.engine_key` masked like engine_key. */
export function maskedLlmParameter(p: Record<string, unknown>): Record<string, unknown> {
  const fb = p?.llm_fallback;
  if (!fb || typeof fb !== 'object' || Array.isArray(fb) || typeof (fb as Record<string, unknown>).engine_key !== 'string') return p;
  const o = fb as Record<string, unknown>;
  return { ...p, llm_fallback: { ...o, engine_key: maskKey(o.engine_key as string) } };
}

/** `parameter` as written back: a fallback key sent exactly as shown (masked) stands for the stored one. */
export function unmaskedLlmParameter(p: Record<string, unknown>, stored: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const sent = p?.llm_fallback;
  const kept = stored?.llm_fallback;
  if (!sent || typeof sent !== 'object' || !kept || typeof kept !== 'object') return p;
  const s = sent as Record<string, unknown>;
  const k = (kept as Record<string, unknown>).engine_key;
  if (typeof s.engine_key === 'string' && typeof k === 'string' && k && s.engine_key === maskKey(k)) return { ...p, llm_fallback: { ...s, engine_key: k } };
  return p;
}

/**
 * A fallback key sent back masked is kept only while it goes where it went: a changed
 * `llm_fallback.engine_url` (or vendor) with the key masked is a 400 (core/secrets/key-destination.ts).
 */
export function refuseMovedFallbackKey(p: Record<string, unknown>, stored: Record<string, unknown> | null | undefined): void {
  const sent = fallbackObject(p?.llm_fallback);
  const kept = fallbackObject(stored?.llm_fallback);
  if (!sent || !kept?.engine_key) return;
  const f = 'parameter.llm_fallback';
  refuseMovedSecret({
    field: `${f}.engine_key`,
    placeField: `${f}.engine_url`,
    stored: true,
    kept: sent.engine_key === maskKey(kept.engine_key),
    before: engineKeyDestination(kept.engine_model, kept.engine_url),
    after: engineKeyDestination(sent.engine_model, sent.engine_url),
  });
}

class SlowFirstToken extends Error {}

/** The first model, and the second when the first fails or is slow before its first token. */
export class FallbackLlm implements ChatLlm {
  private fellBack = false;

  constructor(
    private readonly primary: ChatLlm,
    private readonly makeFallback: () => ChatLlm,
    private readonly firstTokenMs: number | null,
    private readonly onFallback: (f: LlmFallbackInfo) => void,
    private fallback: ChatLlm | null = null,
  ) {}

  get label(): string {
    return this.fellBack ? this.second().label : this.primary.label;
  }

  private second(): ChatLlm {
    return (this.fallback ??= this.makeFallback());
  }

  async *stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
    if (this.fellBack) return yield* this.second().stream(req);
    const ctl = new AbortController();
    const cancel = () => ctl.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', cancel, { once: true });
    const it = this.primary.stream({ ...req, signal: ctl.signal });
    let first: IteratorResult<ChatChunk>;
    let timer: NodeJS.Timeout | undefined;
    try {
      const next = it.next();
      // a slow first that fails after the deadline is not anyone's error any more
      next.catch(() => undefined);
      first = this.firstTokenMs
        ? await Promise.race([
            next,
            new Promise<never>((_r, reject) => {
              timer = setTimeout(() => reject(new SlowFirstToken(`no first token within ${this.firstTokenMs} ms`)), this.firstTokenMs!);
            }),
          ])
        : await next;
    } catch (e) {
      if (req.signal?.aborted || !(e instanceof LlmError || e instanceof SlowFirstToken)) {
        req.signal?.removeEventListener('abort', cancel);
        throw e;
      }
      // the first is dropped (its late answer is never read) and the second answers
      ctl.abort();
      void it.return(undefined).catch(() => undefined);
      req.signal?.removeEventListener('abort', cancel);
      const second = this.second();
      this.fellBack = true;
      this.onFallback({ from: this.primary.label, to: second.label, reason: e instanceof SlowFirstToken ? 'slow' : 'error', message: e.message });
      return yield* second.stream(req);
    } finally {
      clearTimeout(timer);
    }
    try {
      if (first.done) return;
      yield first.value;
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    } finally {
      req.signal?.removeEventListener('abort', cancel);
      await it.return(undefined).catch(() => undefined);
    }
  }

  async complete(req: ChatRequest): Promise<{ content: string; tool_calls: ToolCall[] }> {
    return completion(this.stream(req));
  }
}
