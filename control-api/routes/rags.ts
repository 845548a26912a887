/**
 * /rags: knowledge bases. Sources are storage files or URLs, ingested in the background into
 * chunks (Postgres full-text search by default, embeddings when configured); a duplicate source is
 * 409, adding none is 400, DELETE removes sources and chunks with the RAG.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { alreadyExists, invalidArgument, notFound } from '../../core/errors';
import { ragJson, ragsRepo, type NewSource } from '../../core/repos/rags';
import { storageRepo } from '../../core/repos/storage';
import { ingestPending } from '../../core/rag/ingest';
import { listOfShape, shape } from '../../core/ai/api';
import type { AppContext } from '../context';
import { assertEgressUrls } from '../egress-field';

const FIELDS = ['id', 'customer_id', 'name', 'description', 'status', 'sources', 'tm_create', 'tm_update'];
const tag = 'RAG';
const missing = () => notFound('RESOURCE_NOT_FOUND', 'rag not found');
const url = z.url({ protocol: /^https?$/ }).max(2000);
const sourceLists = { storage_file_ids: z.array(uuid()).max(100).optional(), source_urls: z.array(url).max(100).optional() };

async function toSources(ctx: AppContext, customerId: string, b: { storage_file_ids?: string[]; source_urls?: string[] }): Promise<NewSource[]> {
  const files = b.storage_file_ids ?? [];
  const urls = b.source_urls ?? [];
  assertEgressUrls(ctx, 'source_urls', urls);
  if (new Set(files).size !== files.length || new Set(urls).size !== urls.length) throw alreadyExists('the same source is given twice');
  for (const [i, id] of files.entries()) {
    if (!(await storageRepo(ctx.db).get(customerId, id))) throw notFound('FILE_NOT_FOUND', `storage_file_ids.${i}: storage file ${id} not found`);
  }
  return [...files.map((storage_file_id) => ({ storage_file_id })), ...urls.map((source_url) => ({ source_url }))];
}

function ingest(ctx: AppContext, ragId: string): void {
  void ingestPending({ db: ctx.db, dataDir: ctx.config.dataDir, egress: ctx.egress }, ragId).catch((err: Error) => ctx.logger.warn({ err: err.message, rag: ragId }, 'rag ingestion failed'));
}

async function full(ctx: AppContext, customerId: string, id: string) {
  const r = await ragsRepo(ctx.db).get(customerId, id);
  if (!r) throw missing();
  return ragJson(r, await ragsRepo(ctx.db).sources(id));
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/rags',
    tag,
    summary: 'Create a RAG knowledge base',
    permission: 'manager',
    body: z.object({ name: z.string().trim().min(1).max(255), description: z.string().max(2048).optional(), ...sourceLists }),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, body }) => {
      const sources = await toSources(ctx, auth.customerId, body);
      const repo = ragsRepo(ctx.db);
      const rag = await repo.create(auth.customerId, { name: body.name, description: body.description });
      if (sources.length && (await repo.addSources(auth.customerId, rag.id, sources)) === 'duplicate') throw alreadyExists('the same source is given twice');
      const json = ragJson(rag, await repo.sources(rag.id));
      if (sources.length) ingest(ctx, rag.id);
      return json;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/rags',
    tag,
    summary: 'List RAGs',
    permission: 'agent',
    paginated: true,
    response: listOfShape(FIELDS),
    handler: async ({ ctx, auth, page }) => {
      const repo = ragsRepo(ctx.db);
      const p = await repo.list(auth.customerId, page);
      return { result: await Promise.all(p.result.map(async (r) => ragJson(r, await repo.sources(r.id)))), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/rags/:id',
    tag,
    summary: 'Get a RAG with its sources',
    permission: 'agent',
    params: idParams,
    response: shape(FIELDS),
    handler: ({ ctx, auth, params }) => full(ctx, auth.customerId, params.id),
  }),
  defineRoute({
    method: 'put',
    path: '/rags/:id',
    tag,
    summary: 'Update a RAG',
    permission: 'manager',
    params: idParams,
    body: z.object({ name: z.string().trim().min(1).max(255).optional(), description: z.string().max(2048).optional() }),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params, body }) => {
      const r = await ragsRepo(ctx.db).update(auth.customerId, params.id, body);
      if (!r) throw missing();
      return ragJson(r, await ragsRepo(ctx.db).sources(r.id));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/rags/:id',
    tag,
    summary: 'Delete a RAG, its sources and chunks',
    permission: 'manager',
    params: idParams,
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const r = await ragsRepo(ctx.db).delete(auth.customerId, params.id);
      if (!r) throw missing();
      return ragJson(r.rag, r.sources);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/rags/:id/sources',
    tag,
    summary: 'Add sources to a RAG',
    permission: 'manager',
    params: idParams,
    body: z.object(sourceLists),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params, body }) => {
      const repo = ragsRepo(ctx.db);
      if (!(await repo.get(auth.customerId, params.id))) throw missing();
      if (!body.storage_file_ids?.length && !body.source_urls?.length) {
        throw invalidArgument('storage_file_ids or source_urls: at least one source is required', [
          { field: 'storage_file_ids', issue: 'required' },
          { field: 'source_urls', issue: 'required' },
        ]);
      }
      const sources = await toSources(ctx, auth.customerId, body);
      if ((await repo.addSources(auth.customerId, params.id, sources)) === 'duplicate') throw alreadyExists('the source is already in this rag');
      const json = await full(ctx, auth.customerId, params.id);
      ingest(ctx, params.id);
      return json;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/rags/:id/sources/:source_id',
    tag,
    summary: 'Remove a source and its chunks',
    permission: 'manager',
    params: z.object({ id: uuid(), source_id: uuid() }),
    response: shape(FIELDS),
    handler: async ({ ctx, auth, params }) => {
      const repo = ragsRepo(ctx.db);
      if (!(await repo.get(auth.customerId, params.id))) throw missing();
      if (!(await repo.deleteSource(params.id, params.source_id))) throw notFound('RESOURCE_NOT_FOUND', 'source not found');
      return full(ctx, auth.customerId, params.id);
    },
  }),
];
