/**
 * Storage: the customer's storage account (quota and usage) and /storage_files (upload, list, get,
 * delete, download). Objects live in the ObjectStore (local disk under DATA_DIR/storage by default,
 * S3 when configured: core/storage/backend.ts, docs/storage.md; its failures answer 503).
 * Upload is multipart/form-data (a `file` part, optional `type`, `name`, `detail` fields, as voipbin
 * takes it) up to MAX_UPLOAD_BYTES, or JSON with base64 `content` (then limited by BODY_LIMIT_BYTES).
 * The object is written first and removed again when the row cannot be written (quota), so a refused
 * upload leaves nothing behind.
 */
import { z } from 'zod';
import type { Request, Response } from 'express';
import { defineRoute, idParams, text, validateBody } from '../route';
import { jsonBody } from '../middleware/body';
import { readUpload } from '../upload';
import { ApiError, invalidArgument, notFound } from '../../core/errors';
import { storageRepo, storageFileJson, type StorageAccountRow, type StorageFileRow } from '../../core/repos/storage';
import type { ObjectStore } from '../../core/storage/local';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { signingKey, signResource, checkSignature } from '../../core/storage/signing';
import { clock } from '../../core/clock';
import { formatLegacy } from '../../core/time';
import { newId } from '../../core/ids';
import type { AppContext } from '../context';
import { listOf } from './schemas';
import { sendCustomerFile } from '../customer-file';
import { jsonText } from '../../core/json-text';

const DOWNLOAD_TTL_SEC = 3600;
const keys = new WeakMap<object, string | null>();
function backend(ctx: AppContext): { store: ObjectStore; key: string | null } {
  let key = keys.get(ctx.config);
  if (key === undefined) {
    try {
      key = signingKey(ctx.config.dataDir);
    } catch {
      key = null;
    }
    keys.set(ctx.config, key);
  }
  return { store: storageBackend(ctx.config).files, key };
}

function json(ctx: AppContext, f: StorageFileRow) {
  const { key } = backend(ctx);
  if (!key) return storageFileJson(f, null);
  const step = DOWNLOAD_TTL_SEC / 4;
  const expires = (Math.floor(clock.nowMs() / 1000 / step) + 4) * step;
  const uri = `${ctx.config.publicUrl}/v1.0/storagefiles/${f.id}?${signResource(key, `storage_file/${f.id}`, expires)}`;
  return storageFileJson(f, { uri, expires: new Date(expires * 1000) });
}

async function send(ctx: AppContext, f: StorageFileRow, res: Response): Promise<void> {
  const obj = await viaStorage(() => backend(ctx).store.get(f.object_key));
  if (!obj) throw notFound('FILE_NOT_FOUND', 'file content not found');
  await sendCustomerFile(res, { filename: f.filename, contentType: f.content_type }, obj);
}

/** A storage file as the API answers it (also the service-agent files routes). */
export const storageFileSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  owner_type: z.string(),
  owner_id: z.string(),
  reference_type: z.string(),
  reference_id: z.string(),
  type: z.string(),
  name: z.string(),
  detail: z.string(),
  filename: z.string(),
  filesize: z.number(),
  uri_download: z.string(),
  tm_download_expire: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
export const accountSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  quota_bytes: z.number(),
  total_file_count: z.number(),
  total_file_size: z.number(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
const missing = () => notFound('FILE_NOT_FOUND', 'storage file not found');

/** Largest multipart upload, bytes (JSON uploads are bounded by BODY_LIMIT_BYTES instead). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
const fileName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^/\\\0]+$/, 'must be a plain file name');
const fileType = z
  .string()
  .max(32)
  .regex(/^[a-z0-9_-]*$/, 'must be a short lowercase word (e.g. rag, talk)');
const uploadJson = z.strictObject({
  filename: fileName,
  content: z
    .string()
    .max(64 * 1024 * 1024)
    .regex(/^[A-Za-z0-9+/=\r\n]*$/, 'must be base64'),
  content_type: z
    .string()
    .max(127)
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type')
    .optional(),
  type: fileType.optional(),
  name: text().optional(),
  detail: text(1024).optional(),
});
const uploadFields = z.strictObject({ type: fileType.optional(), name: text().optional(), detail: text(1024).optional() });

interface StorageUpload {
  data: Buffer;
  filename: string;
  contentType: string;
  type?: string;
  name?: string;
  detail?: string;
}

/** The file of a POST /storage_files, from either form; 400/413 in the envelope when unusable. */
async function readStorageUpload(ctx: AppContext, req: Request): Promise<StorageUpload> {
  if (req.is('multipart/form-data')) {
    const up = await readUpload(req, { maxBytes: MAX_UPLOAD_BYTES });
    const fields = validateBody(uploadFields, up.fields);
    fileName.parse(up.filename);
    return { data: up.data, filename: up.filename, contentType: up.contentType, ...fields };
  }
  await new Promise<void>((resolve, reject) =>
    jsonBody(ctx.config.bodyLimitBytes)(req, {} as Response, (err?: unknown) => (err ? reject(err instanceof Error ? err : new Error(jsonText(err))) : resolve())),
  );
  const body = validateBody(uploadJson, req.body ?? {});
  const data = Buffer.from(body.content, 'base64');
  if (data.length === 0) throw invalidArgument('content: empty file', [{ field: 'content', issue: 'empty' }]);
  return { data, filename: body.filename, contentType: body.content_type ?? 'application/octet-stream', type: body.type, name: body.name, detail: body.detail };
}
const tag = 'Storage';

async function accountJson(ctx: AppContext, customerId: string) {
  return accountView(ctx, await storageRepo(ctx.db).account(customerId));
}

/** An account as the API shows it, with its usage. */
export async function accountView(ctx: AppContext, a: StorageAccountRow) {
  const repo = storageRepo(ctx.db);
  const customerId = a.customer_id;
  return {
    id: a.id,
    customer_id: a.customer_id,
    quota_bytes: Number(a.quota_bytes),
    ...(await repo.usage(customerId)),
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/storage_account',
    tag,
    summary: "The customer's storage account: quota and usage",
    permission: 'agent',
    response: accountSchema,
    handler: async ({ ctx, auth }) => accountJson(ctx, auth.customerId),
  }),
  defineRoute({
    method: 'get',
    path: '/storage-accounts/:id',
    tag,
    summary: 'A storage account (own only)',
    permission: 'admin',
    params: idParams,
    response: accountSchema,
    handler: async ({ ctx, auth, params }) => {
      const a = await accountJson(ctx, auth.customerId);
      if (a.id !== params.id) throw notFound('ACCOUNT_NOT_FOUND', 'storage account not found');
      return a;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/storage_files',
    tag,
    summary: 'Upload a file: multipart/form-data (file, type, name, detail) or JSON (filename, content as base64)',
    permission: 'agent',
    rawBody: true,
    contentTypes: ['multipart/form-data', 'application/json'],
    body: uploadJson,
    response: storageFileSchema,
    handler: async ({ ctx, auth, req }) => {
      const up = await readStorageUpload(ctx, req);
      const id = newId();
      const objectKey = `${auth.customerId}/${id}`;
      const { store } = backend(ctx);
      await viaStorage(() => store.put(objectKey, up.data));
      let r;
      try {
        r = await storageRepo(ctx.db).addWithinQuota(auth.customerId, {
          id,
          object_key: objectKey,
          filename: up.filename,
          content_type: up.contentType,
          filesize: up.data.length,
          name: up.name ?? up.filename,
          detail: up.detail ?? '',
          type: up.type ?? '',
        });
      } catch (e) {
        await store.delete(objectKey).catch(() => undefined);
        throw e;
      }
      if (!('id' in r)) {
        await store.delete(objectKey).catch(() => undefined);
        throw new ApiError('STATE_INVALID', 'storage quota exceeded', { details: [{ quota_bytes: r.quota_bytes, used_bytes: r.used_bytes, filesize: up.data.length }] });
      }
      return json(ctx, r);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/storage_files',
    tag,
    summary: 'List files',
    permission: 'agent',
    paginated: true,
    response: listOf(storageFileSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await storageRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map((f) => json(ctx, f)), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/storage_files/:id',
    tag,
    summary: "Get a file's metadata and signed download URL",
    permission: 'agent',
    params: idParams,
    response: storageFileSchema,
    handler: async ({ ctx, auth, params }) => {
      const f = await storageRepo(ctx.db).get(auth.customerId, params.id);
      if (!f) throw missing();
      return json(ctx, f);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/storage_files/:id',
    tag,
    summary: 'Delete a file',
    permission: 'agent',
    params: idParams,
    response: storageFileSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = storageRepo(ctx.db);
      const live = await repo.get(auth.customerId, params.id);
      if (!live) throw missing();
      // The object first: when object storage refuses, the file stays listed (503) and can be deleted again.
      await viaStorage(() => backend(ctx).store.delete(live.object_key));
      const f = await repo.softDelete(auth.customerId, params.id);
      if (!f) throw missing();
      return storageFileJson(f, null);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/storage_files/:id/file',
    tag,
    summary: 'Download a file (with credentials)',
    permission: 'agent',
    params: idParams,
    response: z.any(),
    handler: async ({ ctx, auth, params, res }) => {
      const f = await storageRepo(ctx.db).get(auth.customerId, params.id);
      if (!f) throw missing();
      await send(ctx, f, res);
      return undefined;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/storagefiles/:id',
    tag,
    summary: 'Download a file through its signed URL',
    permission: 'public',
    params: idParams,
    query: z.object({ expires: z.string().max(20), signature: z.string().max(100) }),
    response: z.any(),
    handler: async ({ ctx, params, query, res }) => {
      const { key } = backend(ctx);
      if (!key) throw new ApiError('SIGNING_NOT_CONFIGURED', 'download signing is not configured (STORAGE_SIGNING_KEY)');
      const v = checkSignature(key, `storage_file/${params.id}`, query.expires, query.signature, Math.floor(clock.nowMs() / 1000));
      if (v !== 'ok') throw new ApiError('PERMISSION_DENIED', v === 'expired' ? 'download URL expired' : 'download signature invalid');
      const f = await storageRepo(ctx.db).getById(params.id);
      if (!f) throw missing();
      await send(ctx, f, res);
      return undefined;
    },
  }),
];
