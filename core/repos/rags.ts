/**
 * rags, rag_sources and rag_chunks. A RAG is processing while any source is pending and ready once
 * sources are processed and at least one succeeded. Deleting a RAG or a source removes its chunks
 * (foreign keys cascade).
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { RagRow, RagSourceRow } from '../db/rows/rags';
export type { RagRow, RagSourceRow } from '../db/rows/rags';

export interface RagChunkHit {
  id: string;
  source_id: string;
  content: string;
  score: number;
}

export function ragJson(r: RagRow, sources: RagSourceRow[]) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    name: r.name,
    description: r.description,
    status: r.status,
    sources: sources.map((s) => ({
      id: s.id,
      customer_id: s.customer_id,
      storage_file_id: s.storage_file_id ?? EMPTY_UUID,
      source_url: s.source_url ?? '',
      status: s.status,
      status_message: s.status_message,
    })),
    tm_create: formatLegacy(r.tm_create),
    tm_update: formatLegacy(r.tm_update),
  };
}

export type NewSource = { storage_file_id: string } | { source_url: string };

export function ragsRepo(db: Db) {
  const repo = {
    async create(customerId: string, input: { name: string; description?: string }): Promise<RagRow> {
      const [r] = await db('rags')
        .insert({ id: newId(), customer_id: customerId, name: input.name, description: input.description ?? '', status: 'processing', tm_create: clock.now() })
        .returning('*');
      return r as RagRow;
    },
    async get(customerId: string, id: string): Promise<RagRow | null> {
      return ((await db('rags').where({ id, customer_id: customerId }).first()) as RagRow | undefined) ?? null;
    },
    async getById(id: string): Promise<RagRow | null> {
      return ((await db('rags').where({ id }).first()) as RagRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<RagRow>> {
      return toPage(await paginate<RagRow>(db('rags').where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    async update(customerId: string, id: string, patch: { name?: string; description?: string }): Promise<RagRow | null> {
      const [r] = await db('rags')
        .where({ id, customer_id: customerId })
        .update({ ...patch, tm_update: clock.now() })
        .returning('*');
      return (r as RagRow | undefined) ?? null;
    },
    async delete(customerId: string, id: string): Promise<{ rag: RagRow; sources: RagSourceRow[] } | null> {
      return db.transaction(async (trx) => {
        const rag = (await trx('rags').where({ id, customer_id: customerId }).forUpdate().first()) as RagRow | undefined;
        if (!rag) return null;
        const sources = (await trx('rag_sources').where({ rag_id: id }).orderBy('tm_create')) as RagSourceRow[];
        await trx('rags').where({ id }).delete();
        return { rag, sources };
      });
    },
    async sources(ragId: string): Promise<RagSourceRow[]> {
      return (await db('rag_sources')
        .where({ rag_id: ragId })
        .orderBy([{ column: 'tm_create' }, { column: 'id' }])) as RagSourceRow[];
    },
    /** Adds sources pending; 'duplicate' (nothing added) when one is already in the RAG or given twice. */
    async addSources(customerId: string, ragId: string, list: NewSource[]): Promise<RagSourceRow[] | 'duplicate'> {
      try {
        return await db.transaction(async (trx) => {
          const rows: RagSourceRow[] = [];
          const now = clock.now();
          for (const s of list) {
            const [r] = await trx('rag_sources')
              .insert({ ...s, id: newId(), customer_id: customerId, rag_id: ragId, status: 'pending', tm_create: now })
              .returning('*');
            rows.push(r as RagSourceRow);
          }
          await trx('rags').where({ id: ragId }).update({ status: 'processing', tm_update: now });
          return rows;
        });
      } catch (e) {
        if ((e as { code?: string }).code === '23505') return 'duplicate';
        throw e;
      }
    },
    async deleteSource(ragId: string, sourceId: string): Promise<boolean> {
      const n = await db('rag_sources').where({ rag_id: ragId, id: sourceId }).delete();
      if (n) await repo.refreshStatus(ragId);
      return n > 0;
    },
    async setSource(id: string, patch: Pick<RagSourceRow, 'status' | 'status_message'>): Promise<void> {
      await db('rag_sources')
        .where({ id })
        .update({ ...patch, tm_update: clock.now() });
    },
    /** Replaces a source's chunks (ingestion is idempotent). */
    async putChunks(ragId: string, sourceId: string, chunks: { content: string; embedding?: number[] }[]): Promise<void> {
      await db.transaction(async (trx) => {
        await trx('rag_chunks').where({ source_id: sourceId }).delete();
        const rows = chunks.map((c, seq) => ({ id: newId(), rag_id: ragId, source_id: sourceId, seq, content: c.content, embedding: c.embedding ? JSON.stringify(c.embedding) : null }));
        for (let i = 0; i < rows.length; i += 500) await trx('rag_chunks').insert(rows.slice(i, i + 500));
      });
    },
    /** processing while a source is pending; ready when none is and one succeeded. */
    async refreshStatus(ragId: string): Promise<RagRow | null> {
      const sources = await repo.sources(ragId);
      const pending = sources.some((s) => s.status === 'pending');
      const status = !pending && sources.some((s) => s.status === 'ready') ? 'ready' : 'processing';
      const [r] = await db('rags').where({ id: ragId }).update({ status, tm_update: clock.now() }).returning('*');
      return (r as RagRow | undefined) ?? null;
    },
    async chunkCount(ragId: string): Promise<number> {
      return Number(((await db('rag_chunks').where({ rag_id: ragId }).count({ n: '*' }).first()) as { n: string }).n);
    },
    /** Full-text search (the embedded default): websearch syntax, ranked; falls back to OR of the words. */
    async searchText(ragId: string, query: string, limit: number): Promise<RagChunkHit[]> {
      const words = (query.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => w.length > 2);
      if (!words.length) return [];
      const orQuery = words.join(' OR ');
      const rows = (
        await db.raw(
          `SELECT id, source_id, content, ts_rank(tsv, q) AS score FROM rag_chunks, websearch_to_tsquery('english', ?) q
         WHERE rag_id = ? AND tsv @@ q ORDER BY score DESC, seq LIMIT ?`,
          [orQuery, ragId, limit],
        )
      ).rows as RagChunkHit[];
      return rows.map((r) => ({ ...r, score: Number(r.score) }));
    },
    async embeddedChunks(ragId: string): Promise<{ id: string; source_id: string; content: string; embedding: number[] }[]> {
      const rows = await db('rag_chunks').where({ rag_id: ragId }).whereNotNull('embedding').select('id', 'source_id', 'content', 'embedding');
      return rows.filter((r): r is typeof r & { embedding: number[] } => r.embedding !== null); // all: the query keeps non-null ones
    },
  };
  return repo;
}
