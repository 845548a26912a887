/**
 * Which voices (tts_type), recognisers (stt_type) and engines (engine_model target) an AI may name:
 * only those with a real adapter on this platform. Everything else of the reference's enums is
 * refused with a 400 naming the value and listing what works, so nothing falls back silently to
 * another voice (docs/ai.md "Voices").
 *
 * Local voices: media-engine/tts/registry.ts. Vendor voices: media-app/voices/ (one adapter per
 * vendor). Recognisers: media-engine/stt. Engines: core/llm (OpenAI-compatible chat endpoints).
 */
import { invalidArgument } from '../errors';
import { maskKey } from '../llm/endpoint';

/** Voices synthesised on the node itself. */
export const LOCAL_TTS_TYPES = ['provider_a', 'provider_b', 'provider_c', 'espeak-ng', 'flite'] as const;
/** Cloud voices with a streaming adapter in media-app/voices/. */
export const VENDOR_TTS_TYPES = ['elevenlabs', 'cartesia', 'deepgram', 'openai', 'azure', 'lmnt', 'aws', 'google', 'rime', 'playht'] as const;
export type VendorTtsType = (typeof VENDOR_TTS_TYPES)[number];

/** The reference API's tts_type enum: the values not in VENDOR_TTS_TYPES are refused. */
export const REFERENCE_TTS_TYPES = [
  'async',
  'aws',
  'azure',
  'cartesia',
  'deepgram',
  'elevenlabs',
  'fish',
  'google',
  'groq',
  'hume',
  'inworld',
  'lmnt',
  'minimax',
  'neuphonic',
  'nvidia-riva',
  'openai',
  'piper',
  'playht',
  'rime',
  'sarvam',
  'xtts',
] as const;

/** Recognisers an AI may name ('' = pocketsphinx). */
export const AI_STT_TYPES = ['pocketsphinx', 'deepgram', 'cartesia', 'elevenlabs'] as const;
/** engine_model targets (`target.model`): a chat model reached through its OpenAI-compatible endpoint, or a speech-to-speech one (below). */
export const ENGINE_TARGETS = ['openai', 'gemini', 'grok', 'openai-realtime', 'gemini-live', 'deepgram-agent'] as const;

/**
 * engine_model targets that are speech-to-speech models (our extension of the reference enum):
 * ai_talk streams the call's audio to them over a WebSocket (media-app/ai/realtime.ts) instead of
 * STT → chat LLM → TTS; `openai-realtime.<model>` is OpenAI's Realtime API (e.g. gpt-realtime),
 * `gemini-live.<model>` Gemini's Live API, `deepgram-agent.<think model>` Deepgram's Voice Agent API.
 */
export const REALTIME_TARGETS = ['openai-realtime', 'gemini-live', 'deepgram-agent'] as const;
export type RealtimeTarget = (typeof REALTIME_TARGETS)[number];

/** The speech-to-speech target and model of an engine_model, or null for a chat model. */
export function realtimeModel(v: string | undefined): { target: RealtimeTarget; model: string } | null {
  const dot = (v ?? '').indexOf('.');
  if (dot <= 0) return null;
  const target = v!.slice(0, dot);
  return has(REALTIME_TARGETS, target) ? { target: target as RealtimeTarget, model: v!.slice(dot + 1) } : null;
}

const has = (list: readonly string[], v: string) => list.includes(v);

export function isVendorTts(t: string): t is VendorTtsType {
  return has(VENDOR_TTS_TYPES, t);
}

/** '' or a voice with an adapter; else 400 naming it. */
export function checkTtsType(field: string, v: string | undefined): void {
  if (!v || has(LOCAL_TTS_TYPES, v) || has(VENDOR_TTS_TYPES, v)) return;
  const works = [...VENDOR_TTS_TYPES, ...LOCAL_TTS_TYPES].join(', ');
  const why = has(REFERENCE_TTS_TYPES, v) ? 'has no adapter on this platform' : 'is not a known voice type';
  throw invalidArgument(`${field} "${v}" ${why}; use one of: ${works}`, [{ field, issue: `no adapter for "${v}"` }]);
}

/** '' or a recogniser with an adapter; else 400 naming it. */
export function checkSttType(field: string, v: string | undefined): void {
  if (!v || has(AI_STT_TYPES, v)) return;
  throw invalidArgument(`${field} "${v}" has no adapter on this platform; use one of: ${AI_STT_TYPES.join(', ')} (or leave it empty for pocketsphinx)`, [{ field, issue: `no adapter for "${v}"` }]);
}

/**
 * The recogniser an AI uses when its `stt_type` fails (our extension `parameter.stt_fallback`, a
 * stt_type), checked like `stt_type`: 400 naming the field otherwise. undefined when none.
 */
export function sttFallbackOf(p: Record<string, unknown> | undefined): string | undefined {
  const fb = p?.stt_fallback;
  if (fb === undefined || fb === '') return undefined;
  if (typeof fb !== 'string') throw invalidArgument('parameter.stt_fallback must be a stt_type', [{ field: 'parameter.stt_fallback', issue: 'not a recogniser' }]);
  checkSttType('parameter.stt_fallback', fb);
  return fb;
}

/** '' or `target.model` with a target the platform can reach; else 400 naming it. */
export function checkEngineModel(field: string, v: string | undefined): void {
  if (!v) return;
  const target = v.slice(0, Math.max(0, v.indexOf('.')));
  if (realtimeModel(v) && !realtimeModel(v)!.model) throw invalidArgument(`${field} "${v}" names no model; e.g. ${target}.<model>`, [{ field, issue: 'no model' }]);
  if (has(ENGINE_TARGETS, target)) return;
  throw invalidArgument(`${field} "${v}": target "${target}" has no adapter on this platform; use one of: ${ENGINE_TARGETS.map((t) => `${t}.<model>`).join(', ')}`, [
    { field, issue: `no adapter for "${target}"` },
  ]);
}

/**
 * The voice settings an AI keeps in `parameter` (our extension): `tts_fallback` ("type" or
 * { tts_type, tts_voice_id, tts_key }), `tts_first_byte_ms` (100-10000), `tts_key` (a string).
 */
export function checkVoiceParameter(p: Record<string, unknown> | undefined): void {
  if (!p) return;
  const fb = p.tts_fallback;
  if (fb !== undefined && fb !== '') {
    const type = typeof fb === 'string' ? fb : fb && typeof fb === 'object' && !Array.isArray(fb) ? (fb as Record<string, unknown>).tts_type : undefined;
    if (typeof type !== 'string' || !type) {
      throw invalidArgument('parameter.tts_fallback must be a voice type or { tts_type, tts_voice_id, tts_key }', [{ field: 'parameter.tts_fallback', issue: 'not a voice' }]);
    }
    checkTtsType('parameter.tts_fallback', type);
  }
  const ms = p.tts_first_byte_ms;
  if (ms !== undefined && (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 100 || ms > 10_000)) {
    throw invalidArgument('parameter.tts_first_byte_ms must be a whole number of ms from 100 to 10000', [{ field: 'parameter.tts_first_byte_ms', issue: 'out of range' }]);
  }
  if (p.tts_key !== undefined && typeof p.tts_key !== 'string') {
    throw invalidArgument('parameter.tts_key must be a string', [{ field: 'parameter.tts_key', issue: 'not a string' }]);
  }
}

/**
 * `parameter` as shown (an AI's JSON, an aicall's, which copies it, and their events): the voice
 * keys (`tts_key`, `tts_fallback.tts_key`) masked like engine_key; everything else as stored.
 */
export function maskedVoiceParameter(p: Record<string, unknown>): Record<string, unknown> {
  if (!p || typeof p !== 'object') return p;
  const out: Record<string, unknown> = { ...p };
  if (typeof p.tts_key === 'string') out.tts_key = maskKey(p.tts_key);
  const fb = p.tts_fallback;
  if (fb && typeof fb === 'object' && !Array.isArray(fb) && typeof (fb as Record<string, unknown>).tts_key === 'string') {
    const o = fb as Record<string, unknown>;
    out.tts_fallback = { ...o, tts_key: maskKey(o.tts_key as string) };
  }
  return out;
}

/**
 * `parameter` as written back by a client that read it: a voice key sent exactly as it is shown
 * (masked) stands for the stored key, not a new one; any other value replaces it.
 */
export function unmaskedVoiceParameter(p: Record<string, unknown>, stored: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const same = (sent: unknown, kept: unknown): kept is string => typeof sent === 'string' && typeof kept === 'string' && kept !== '' && sent === maskKey(kept);
  const out: Record<string, unknown> = { ...p };
  if (same(p.tts_key, stored?.tts_key)) out.tts_key = stored!.tts_key;
  const fb = p.tts_fallback;
  const storedFb = stored?.tts_fallback;
  if (fb && typeof fb === 'object' && !Array.isArray(fb) && storedFb && typeof storedFb === 'object' && !Array.isArray(storedFb)) {
    const o = fb as Record<string, unknown>;
    const k = (storedFb as Record<string, unknown>).tts_key;
    if (same(o.tts_key, k)) out.tts_fallback = { ...o, tts_key: k };
  }
  return out;
}
