/**
 * AI audits: each AI participant of a finished AI call is evaluated by the server-wide LLM (the one
 * summaries use: AI_LLM_BASE_URL / AI_LLM_MODEL / AI_LLM_API_KEY, through the egress policy). The
 * model is asked for JSON {overall_score 1-5, dimensions, summary}; an answer that is not such JSON,
 * or an LLM failure, ends the audit `failed` with the reason.
 */
import type { Db } from '../db/knex';
import { aicallsRepo, type AimessageRow } from '../repos/ai-calls';
import { aiAuditsRepo, type AiAuditResult, type AiAuditRow } from '../repos/ai-audits';
import type { EgressPolicy } from '../net';
import { summaryLlm } from './summary';
import { jsonInAnswer } from '../llm/json-answer';

export interface AuditDeps {
  db: Db;
  env?: NodeJS.ProcessEnv;
  egress?: EgressPolicy;
}

const DIMENSIONS = ['helpfulness', 'accuracy', 'tone', 'goal_completion', 'tool_usage'];

function prompt(language: string): string {
  return (
    'You audit an AI assistant. Evaluate the turns marked "AI under audit" in the conversation. ' +
    `Answer with JSON only: {"overall_score": integer 1-5, "dimensions": {${DIMENSIONS.map((d) => `"${d}": {"score": 1-5, "reason": string} or null`).join(', ')}}, "summary": string}. ` +
    `Write the reasons and the summary in the language ${language}.`
  );
}

function transcript(messages: AimessageRow[], aiId: string): string {
  return messages
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => `${m.role === 'user' ? 'User' : m.active_ai_id === aiId || m.active_ai_id === null ? 'AI under audit' : 'Other AI'}: ${m.content}`)
    .join('\n');
}

/** The evaluation the model answered, or an error naming what is wrong with it. */
export function parseEvaluation(text: string): { evaluation: Record<string, unknown>; score: number } | { error: string } {
  const found = jsonInAnswer(text, 'evaluation');
  if ('error' in found) return found;
  const v = found.value;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'the evaluation is not an object' };
  const score = (v as Record<string, unknown>).overall_score;
  if (typeof score !== 'number' || !Number.isInteger(score) || score < 1 || score > 5) return { error: 'overall_score is not an integer from 1 to 5' };
  return { evaluation: v as Record<string, unknown>, score };
}

/** Runs one audit to its end; returns the finished row (null when it was deleted meanwhile). */
export async function runAudit(deps: AuditDeps, audit: AiAuditRow): Promise<AiAuditRow | null> {
  let result: AiAuditResult;
  try {
    const messages = await aicallsRepo(deps.db).history(audit.aicall_id);
    const text = transcript(messages, audit.ai_id);
    if (!text) throw new Error('the AI call has no conversation to audit');
    const { content } = await summaryLlm(deps.env, deps.egress).complete({
      messages: [
        { role: 'system', content: prompt(audit.language) },
        { role: 'user', content: text },
      ],
    });
    const parsed = parseEvaluation(content);
    result =
      'error' in parsed
        ? { status: 'failed', error: parsed.error }
        : { status: 'completed', error: '', overall_score: parsed.score, evaluation: parsed.evaluation, message_ids: [...messages].reverse().map((m) => m.id) };
  } catch (e) {
    result = { status: 'failed', error: (e as Error).message };
  }
  return aiAuditsRepo(deps.db).finish(audit.id, result);
}
