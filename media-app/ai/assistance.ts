/** Which AI or team an action names: assistance_type/assistance_id, or the deprecated ai_id (an AI). */
import { isUnset } from '../../core/flow';
import { AiNotFound } from '../../core/ai/session';
import { LlmError } from '../../core/llm/client';

export function assistanceOf(o: { assistance_type?: 'ai' | 'team'; assistance_id?: string; ai_id?: string }): { type: 'ai' | 'team'; id: string } | null {
  if (!isUnset(o.assistance_id)) return { type: o.assistance_type ?? 'ai', id: o.assistance_id! };
  if (!isUnset(o.ai_id)) return { type: 'ai', id: o.ai_id! };
  return null;
}

/** A start failure the flow should end on with a clear message; other errors rethrow. */
export function startFailure(action: string, e: unknown): string {
  if (e instanceof LlmError || e instanceof AiNotFound) return `${action}: ${(e as Error).message}`;
  throw e;
}
