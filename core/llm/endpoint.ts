/**
 * Which endpoint an AI talks to. Per AI: engine_url (base URL), engine_model (`target.model`,
 * e.g. openai.gpt-5 → model gpt-5) and engine_key. Server-wide fallbacks: AI_LLM_BASE_URL,
 * AI_LLM_API_KEY, AI_LLM_MODEL, AI_EMBEDDING_MODEL. A known target with a key and no URL uses that
 * vendor's OpenAI-compatible URL. AI_LLM_API_KEY is never sent to an engine_url other than
 * AI_LLM_BASE_URL (an AI with its own URL and no engine_key is called without a key). Nothing configured: LlmError NOT_CONFIGURED, said plainly.
 */
import { LlmClient, LlmError, type LlmEndpoint } from './client';
import { egressPolicyFor, type EgressPolicy } from '../net';

const VENDOR_URLS: Record<string, string> = {
  openai: 'https://api.openai.com/v1',
  grok: 'https://api.x.ai/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta/openai',
};

export interface EngineConfig {
  engine_model?: string;
  engine_url?: string;
  engine_key?: string;
}

export function resolveEndpoint(ai: EngineConfig, env: NodeJS.ProcessEnv = process.env): LlmEndpoint {
  const model = ai.engine_model || env.AI_LLM_MODEL || '';
  const dot = model.indexOf('.');
  const target = dot > 0 ? model.slice(0, dot) : '';
  const name = dot > 0 ? model.slice(dot + 1) : model;
  // the server's key goes only to the server's endpoint (or a vendor's), never to a customer's engine_url
  const trim = (u: string) => u.replace(/\/+$/, '');
  const ownUrl = !!ai.engine_url && trim(ai.engine_url) !== trim(env.AI_LLM_BASE_URL ?? '');
  const apiKey = ai.engine_key || (ownUrl ? '' : env.AI_LLM_API_KEY) || '';
  const baseUrl = ai.engine_url || env.AI_LLM_BASE_URL || (apiKey ? (VENDOR_URLS[target] ?? '') : '');
  if (!baseUrl) {
    throw new LlmError('NOT_CONFIGURED', "no LLM endpoint is configured: set the AI's engine_url (an OpenAI-compatible base URL) or AI_LLM_BASE_URL on the server");
  }
  return { baseUrl, model: name || 'default', apiKey, embeddingModel: env.AI_EMBEDDING_MODEL || undefined };
}

/** The AI's client; requests go through `egress` (default: the policy of `env`). */
export function llmFor(ai: EngineConfig, env: NodeJS.ProcessEnv = process.env, egress: EgressPolicy = egressPolicyFor(env)): LlmClient {
  return new LlmClient(resolveEndpoint(ai, env), egress);
}

/** The key as the API shows it: never whole (first 3 and last 4 characters at most). */
export function maskKey(key: string): string {
  if (!key) return '';
  if (key.length <= 8) return '*'.repeat(key.length);
  return `${key.slice(0, 3)}${'*'.repeat(Math.min(20, key.length - 7))}${key.slice(-4)}`;
}
