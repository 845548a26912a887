/**
 * Retrieval from a RAG: by embeddings (cosine similarity) when the server has an embedding model
 * configured and the chunks carry vectors, otherwise Postgres full-text search (the embedded
 * default). The hits go into the LLM request as context (ai_talk, ai_task, search_knowledge).
 */
import type { Db } from '../db/knex';
import { cosine, LlmClient } from '../llm/client';
import { ragsRepo, type RagChunkHit } from '../repos/rags';
import { egressPolicyFor, type EgressPolicy } from '../net';

/** Embeddings client when AI_EMBEDDING_MODEL and an endpoint (AI_LLM_BASE_URL) are set; else null. */
export function embeddingClient(env: NodeJS.ProcessEnv = process.env, egress: EgressPolicy = egressPolicyFor(env)): LlmClient | null {
  if (!env.AI_EMBEDDING_MODEL || !env.AI_LLM_BASE_URL) return null;
  return new LlmClient({ baseUrl: env.AI_LLM_BASE_URL, model: env.AI_LLM_MODEL || 'default', apiKey: env.AI_LLM_API_KEY || '', embeddingModel: env.AI_EMBEDDING_MODEL }, egress);
}

export async function retrieve(db: Db, ragId: string, query: string, limit = 3, env: NodeJS.ProcessEnv = process.env, egress?: EgressPolicy): Promise<RagChunkHit[]> {
  const repo = ragsRepo(db);
  const embedder = embeddingClient(env, egress);
  if (embedder) {
    const chunks = await repo.embeddedChunks(ragId);
    if (chunks.length) {
      const [q] = await embedder.embed([query]);
      return chunks
        .map((c) => ({ id: c.id, source_id: c.source_id, content: c.content, score: cosine(q!, c.embedding) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, limit);
    }
  }
  return repo.searchText(ragId, query, limit);
}

/** The system message that carries retrieved knowledge. */
export function knowledgeMessage(hits: RagChunkHit[]): string {
  return `Relevant knowledge (use it to answer when it applies):\n${hits.map((h, i) => `[${i + 1}] ${h.content}`).join('\n\n')}`;
}
