/**
 * /service_agents/files: the agent's own files (attachments for talk chats). Multipart upload (a
 * `file` part, optional `type` — only `talk` —, `name`, `detail`), stored like /storage_files (same
 * object store, same customer quota) but owned by the agent: another agent's file answers 404.
 */
import { z } from 'zod';
import { defineRoute, idParams, text, validateBody, type AnyRoute } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { newId } from '../../core/ids';
import { toPage } from '../../core/pagination';
import { storageFileJson, storageRepo, type StorageFileRow } from '../../core/repos/storage';
import { storageBackend } from '../../core/storage/backend';
import { readUpload } from '../upload';
import { MAX_UPLOAD_BYTES, storageFileSchema } from './storage';
import { agentScope, pageQuery, serviceAgentRoutes, type AgentScope } from '../service-agents/scope';
import type { AppContext } from '../context';
import { sendCustomerFile } from '../customer-file';
import { agentReachRepo } from '../../core/repos/agent-reach';

const store = (ctx: AppContext) => storageBackend(ctx.config).files;
const missing = () => notFound('FILE_NOT_FOUND', 'file not found');
const fileName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^/\\\0]+$/, 'must be a plain file name');
const fields = z.strictObject({ type: z.enum(['talk']).optional(), name: text().optional(), detail: text(1024).optional() });

async function ownFile(ctx: AppContext, s: AgentScope, id: string): Promise<StorageFileRow> {
  const f = await agentReachRepo(ctx.db, s).file(id.toLowerCase());
  if (!f) throw missing();
  return f;
}

const defs: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/service_agents/files',
    tag: 'Service Agent',
    summary: 'Upload a file (multipart/form-data: file, type talk, name, detail)',
    permission: 'agent',
    rawBody: true,
    contentTypes: ['multipart/form-data'],
    response: storageFileSchema,
    handler: async ({ ctx, auth, req }) => {
      const s = agentScope(auth);
      const up = await readUpload(req, { maxBytes: MAX_UPLOAD_BYTES });
      const f = validateBody(fields, up.fields);
      validateBody(z.object({ filename: fileName }), { filename: up.filename });
      if (up.data.length === 0) throw new ApiError('INVALID_ARGUMENT', 'file: empty', { details: [{ field: 'file', issue: 'empty' }] });
      const id = newId();
      const objectKey = `${s.customerId}/${id}`;
      await store(ctx).put(objectKey, up.data);
      let r: Awaited<ReturnType<ReturnType<typeof storageRepo>['addWithinQuota']>>;
      try {
        r = await storageRepo(ctx.db).addWithinQuota(s.customerId, {
          id,
          object_key: objectKey,
          filename: up.filename,
          content_type: up.contentType,
          filesize: up.data.length,
          name: f.name ?? up.filename,
          detail: f.detail ?? '',
          type: f.type ?? 'talk',
          owner_type: 'agent',
          owner_id: s.agentId,
        });
      } catch (e) {
        await store(ctx).delete(objectKey);
        throw e;
      }
      if (!('id' in r)) {
        await store(ctx).delete(objectKey);
        throw new ApiError('STATE_INVALID', 'storage quota exceeded', { details: [{ quota_bytes: r.quota_bytes, used_bytes: r.used_bytes, filesize: up.data.length }] });
      }
      return storageFileJson(r, null);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/files',
    tag: 'Service Agent',
    summary: 'The agent’s files',
    permission: 'agent',
    paginated: true,
    query: z.object(pageQuery),
    response: z.object({ result: z.array(storageFileSchema), next_page_token: z.string() }),
    handler: async ({ ctx, auth, page }) => toPage(await agentReachRepo(ctx.db, agentScope(auth)).files(page), (f) => storageFileJson(f, null)),
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/files/:id',
    tag: 'Service Agent',
    summary: 'One of the agent’s files',
    permission: 'agent',
    params: idParams,
    response: storageFileSchema,
    handler: async ({ ctx, auth, params }) => storageFileJson(await ownFile(ctx, agentScope(auth), params.id), null),
  }),
  defineRoute({
    method: 'delete',
    path: '/service_agents/files/:id',
    tag: 'Service Agent',
    summary: 'Delete one of the agent’s files',
    permission: 'agent',
    params: idParams,
    response: storageFileSchema,
    handler: async ({ ctx, auth, params }) => {
      const s = agentScope(auth);
      const f = await ownFile(ctx, s, params.id);
      const gone = await storageRepo(ctx.db).softDelete(s.customerId, f.id);
      if (!gone) throw missing();
      await store(ctx).delete(gone.object_key);
      return storageFileJson(gone, null);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/service_agents/files/:id/file',
    tag: 'Service Agent',
    summary: 'Download one of the agent’s files',
    permission: 'agent',
    params: idParams,
    response: z.any(),
    handler: async ({ ctx, auth, params, res }) => {
      const f = await ownFile(ctx, agentScope(auth), params.id);
      const obj = await store(ctx).get(f.object_key);
      if (!obj) throw notFound('FILE_NOT_FOUND', 'file content not found');
      await sendCustomerFile(res, { filename: f.filename, contentType: f.content_type }, obj);
      return undefined;
    },
  }),
];

export const routes = serviceAgentRoutes(defs);
