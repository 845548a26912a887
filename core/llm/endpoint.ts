/**
 * Which endpoint an AI talks to. Per AI: engine_model (`target.model`, e.g. openai.gpt-5 → model
 * gpt-5), engine_url (base URL) and engine_key. The target picks the protocol: `gemini` speaks
 * Gemini's own API (gemini.ts), every other one the OpenAI-compatible chat completions.
 *
 * Where the request goes, first match wins (docs/ai.md "LLM endpoint"):
 *   1. the AI's engine_url (with its engine_key only);
 *   2. the target's vendor settings, when the operator set its URL or key: openai → OPENAI_BASE_URL /
 *      OPENAI_API_KEY, grok → XAI_BASE_URL / XAI_API_KEY, gemini → GEMINI_BASE_URL / GEMINI_API_KEY
 *      (each URL defaulting to the vendor's public endpoint);
 *   3. the server-wide fallbacks AI_LLM_BASE_URL / AI_LLM_API_KEY: an OpenAI-compatible endpoint, spoken
 *      to in that protocol whatever the target (a proxy serving every model); a key and no URL means
 *      the target vendor's public endpoint in the vendor's protocol.
 * A platform key (of 2 or 3) is never sent to a customer's engine_url other than that same URL.
 * Nothing configured: LlmError NOT_CONFIGURED, said plainly.
 */
import { LlmClient, LlmError, type ChatLlm, type LlmEndpoint } from './client';
import { GeminiClient } from './gemini';
import { egressPolicyFor, type EgressPolicy } from '../net';
import { openKey, SealedKeyError } from '../secrets/keys';

/** The chat targets' vendor settings and public endpoints. */
const VENDORS = {
  openai: { env: 'OPENAI', url: 'https://api.openai.com/v1' },
  grok: { env: 'XAI', url: 'https://api.x.ai/v1' },
  gemini: { env: 'GEMINI', url: 'https://generativelanguage.googleapis.com' },
} as const;
type ChatTarget = keyof typeof VENDORS;

export interface EngineConfig {
  engine_model?: string;
  engine_url?: string;
  engine_key?: string;
}

export interface ResolvedEndpoint extends LlmEndpoint {
  /** gemini: Gemini's API; openai: OpenAI-compatible chat completions */
  protocol: 'openai' | 'gemini';
  /** `target.model` as configured (the label events use) */
  engineModel: string;
}

const trim = (u: string | undefined) => (u ?? '').trim().replace(/\/+$/, '');

/** The AI's engine_key opened (stored sealed, docs/ai.md "Keys"); one that cannot be is NOT_CONFIGURED, never sent. */
function engineKey(ai: EngineConfig): string {
  try {
    return openKey(ai.engine_key ?? '');
  } catch (e) {
    if (e instanceof SealedKeyError) throw new LlmError('NOT_CONFIGURED', `the AI's engine_key: ${e.message}`);
    throw e;
  }
}

export function resolveEndpoint(stored: EngineConfig, env: NodeJS.ProcessEnv = process.env): ResolvedEndpoint {
  const ai = { ...stored, engine_key: engineKey(stored) };
  const engineModel = ai.engine_model || env.AI_LLM_MODEL || '';
  const dot = engineModel.indexOf('.');
  const target = dot > 0 ? engineModel.slice(0, dot) : '';
  const name = (dot > 0 ? engineModel.slice(dot + 1) : engineModel) || 'default';
  const vendor = target in VENDORS ? VENDORS[target as ChatTarget] : null;
  const protocol = target === 'gemini' ? 'gemini' : 'openai';
  const out = (baseUrl: string, apiKey: string, via: ResolvedEndpoint['protocol'] = protocol): ResolvedEndpoint => ({
    baseUrl: trim(baseUrl),
    model: name,
    apiKey,
    protocol: via,
    engineModel,
    embeddingModel: env.AI_EMBEDDING_MODEL || undefined,
  });
  const vendorUrl = vendor ? trim(env[`${vendor.env}_BASE_URL`]) : '';
  const vendorKey = vendor ? (env[`${vendor.env}_API_KEY`] ?? '').trim() : '';
  const serverUrl = trim(env.AI_LLM_BASE_URL);
  const serverKey = env.AI_LLM_API_KEY ?? '';
  if (ai.engine_url) {
    // the server's keys go only to the server's own endpoints, never to a customer's engine_url
    const url = trim(ai.engine_url);
    const platformKey = vendor && url === (vendorUrl || vendor.url) && vendorKey ? vendorKey : url === serverUrl ? serverKey : '';
    return out(url, ai.engine_key || platformKey);
  }
  if (vendor && (vendorUrl || vendorKey)) return out(vendorUrl || vendor.url, ai.engine_key || vendorKey);
  const apiKey = ai.engine_key || serverKey;
  const baseUrl = serverUrl || (apiKey && vendor ? vendor.url : '');
  if (!baseUrl) {
    throw new LlmError(
      'NOT_CONFIGURED',
      "no LLM endpoint is configured: set the AI's engine_url (an OpenAI-compatible base URL, or Gemini's for gemini.*), its vendor's <VENDOR>_API_KEY or AI_LLM_BASE_URL on the server",
    );
  }
  // AI_LLM_BASE_URL is an OpenAI-compatible endpoint (a local server, a proxy serving every model)
  return out(baseUrl, apiKey, serverUrl ? 'openai' : protocol);
}

/** The AI's chat model; requests go through `egress` (default: the policy of `env`). */
export function llmFor(ai: EngineConfig, env: NodeJS.ProcessEnv = process.env, egress: EgressPolicy = egressPolicyFor(env)): ChatLlm {
  const e = resolveEndpoint(ai, env);
  return e.protocol === 'gemini' ? new GeminiClient(e, egress) : new LlmClient(e, egress, e.engineModel || e.model);
}

/** The key as the API shows it: never whole (first 3 and last 4 characters at most). */
export function maskKey(key: string): string {
  if (!key) return '';
  if (key.length <= 8) return '*'.repeat(key.length);
  return `${key.slice(0, 3)}${'*'.repeat(Math.min(20, key.length - 7))}${key.slice(-4)}`;
}
