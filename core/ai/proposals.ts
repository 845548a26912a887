/**
 * Prompt proposals: the AI's own engine reads its current init_prompt and its recent conversations
 * and proposes a better prompt (progressing → completed | failed). Accepting one changes the AI's
 * prompt; the history entry then names the proposal.
 */
import type { Db } from '../db/knex';
import type { AiRow } from '../repos/ais';
import { proposalsRepo, type ProposalRow } from '../repos/ai-proposals';
import { llmFor } from '../llm/endpoint';
import type { EgressPolicy } from '../net';

async function recentConversation(db: Db, aiId: string): Promise<string> {
  const rows = (await db('aimessages').where({ active_ai_id: aiId }).whereIn('role', ['user', 'assistant']).whereNull('tm_delete').orderBy('tm_create', 'desc').limit(40)) as {
    role: string;
    content: string;
  }[];
  return rows
    .reverse()
    .map((r) => `${r.role}: ${r.content}`)
    .join('\n');
}

export async function generateProposal(db: Db, p: ProposalRow, ai: AiRow, language = 'en-US', env: NodeJS.ProcessEnv = process.env, egress?: EgressPolicy): Promise<ProposalRow | null> {
  const repo = proposalsRepo(db);
  try {
    const llm = llmFor(ai, env, egress);
    const convo = await recentConversation(db, ai.id);
    const { content } = await llm.complete({
      messages: [
        {
          role: 'system',
          content: `You improve system prompts of voice agents. Answer only with JSON {"prompt": "...", "rationale": "..."} in the language ${language}.`,
        },
        { role: 'user', content: `Current prompt:\n${p.original_prompt}\n\nRecent conversations:\n${convo || '(none)'}` },
      ],
    });
    let prompt = content.trim();
    let rationale = '';
    try {
      const j = JSON.parse(prompt.replace(/^```(json)?|```$/g, '')) as { prompt?: unknown; rationale?: unknown };
      if (typeof j.prompt === 'string') {
        prompt = j.prompt;
        rationale = typeof j.rationale === 'string' ? j.rationale : '';
      }
    } catch {
      /* plain text: the whole answer is the prompt */
    }
    if (!prompt) throw new Error('the engine proposed an empty prompt');
    return repo.transition(p.id, ['progressing'], { status: 'completed', proposed_prompt: prompt, rationale });
  } catch (e) {
    return repo.transition(p.id, ['progressing'], { status: 'failed', error: (e as Error).message.slice(0, 500) });
  }
}
