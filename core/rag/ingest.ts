/**
 * Ingestion of a RAG's pending sources: read the storage file or fetch the URL, extract text,
 * chunk, embed through the provider when embeddings are configured, store the chunks. Each source
 * ends ready (status_message counts chunks) or error (status_message says why); then the RAG's
 * status is recomputed. Runs in the background of the process that accepted the request.
 */
import type { Db } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { ragsRepo, type RagSourceRow } from '../repos/rags';
import { storageRepo } from '../repos/storage';
import { storageBackend } from '../storage/backend';
import { chunkText, htmlToText } from './chunk';
import { embeddingClient } from './search';
import { egressPolicyFor, EgressRefused, type EgressPolicy } from '../net';

const MAX_BYTES = 5 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 5;

export interface IngestDeps {
  db: Db;
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  events?: EventPublisher | null;
  /** The egress policy URLs are fetched through (default: egressPolicyFor(env)). */
  egress?: EgressPolicy;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > MAX_BYTES) throw new Error(`document is larger than ${MAX_BYTES} bytes`);
    parts.push(c);
  }
  return Buffer.concat(parts);
}

function toText(body: Buffer, contentType: string, name: string): string {
  const ct = contentType.toLowerCase();
  const text = body.toString('utf8');
  if (ct.includes('html') || /\.html?$/i.test(name)) return htmlToText(text);
  if (ct.startsWith('text/') || ct.includes('json') || ct.includes('xml') || ct.includes('markdown') || /\.(txt|md|csv|json)$/i.test(name)) return text;
  if (ct === 'application/octet-stream' || !ct) {
    // untyped upload: accept it when it decodes as text
    if (!text.includes('\uFFFD') && !/[\x00-\x08\x0e-\x1f]/.test(text.slice(0, 4096))) return text; // eslint-disable-line no-control-regex -- looks for control characters on purpose: binary content
  }
  throw new Error(`unsupported content type ${contentType || 'unknown'} (text, markdown, HTML, CSV or JSON)`);
}

async function loadSource(deps: IngestDeps, s: RagSourceRow): Promise<string> {
  if (s.storage_file_id) {
    const f = await storageRepo(deps.db).get(s.customer_id, s.storage_file_id);
    if (!f) throw new Error('storage file not found');
    const obj = await storageBackend(deps).files.get(f.object_key);
    if (!obj) throw new Error('storage file content not found');
    return toText(await readAll(obj.stream), f.content_type, f.filename);
  }
  const url = s.source_url ?? '';
  const egress = deps.egress ?? egressPolicyFor(deps.env);
  let res;
  try {
    res = await egress.fetch(url, { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_BYTES, maxRedirects: MAX_REDIRECTS, headers: { 'user-agent': 'platform-rag/1' } });
  } catch (e) {
    // the policy's messages name no address and echo no answer (no port-scan oracle)
    throw new Error(`${e instanceof EgressRefused ? 'fetch refused' : 'fetch failed'}: ${(e as Error).message}`);
  }
  if (res.status < 200 || res.status > 299) throw new Error(`fetch failed: HTTP ${res.status}`);
  const ct = res.headers['content-type'];
  return toText(res.body, typeof ct === 'string' ? ct : '', new URL(res.url).pathname);
}

/** Ingests one source; never throws (the source row carries the outcome). */
export async function ingestSource(deps: IngestDeps, s: RagSourceRow): Promise<void> {
  const repo = ragsRepo(deps.db);
  try {
    const text = await loadSource(deps, s);
    const chunks = chunkText(text);
    if (!chunks.length) throw new Error('document has no text');
    const embedder = embeddingClient(deps.env, deps.egress);
    const vectors = embedder ? await embedder.embed(chunks) : null;
    await repo.putChunks(
      s.rag_id,
      s.id,
      chunks.map((content, i) => ({ content, embedding: vectors?.[i] })),
    );
    await repo.setSource(s.id, { status: 'ready', status_message: `document parsed and ${chunks.length} chunk${chunks.length === 1 ? '' : 's'} created${vectors ? ' (embedded)' : ''}` });
  } catch (e) {
    await repo.setSource(s.id, { status: 'error', status_message: (e as Error).message.slice(0, 500) }).catch(() => undefined);
  }
}

/** Ingests every pending source of a RAG, then recomputes its status. */
export async function ingestPending(deps: IngestDeps, ragId: string): Promise<void> {
  const repo = ragsRepo(deps.db);
  const pending = (await repo.sources(ragId)).filter((s) => s.status === 'pending');
  for (const s of pending) await ingestSource(deps, s);
  await repo.refreshStatus(ragId);
}
