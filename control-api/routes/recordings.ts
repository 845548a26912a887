/**
 * /recordings (list, get, delete) and /recordings/{id}/playfiles (signed, expiring uri_download with
 * filesize, duration, peaks); /recordingfiles/{id}?filename=&expires=&signature= serves the file.
 * Files: core/storage/recording-files.ts (local disk, or S3 when configured; docs/storage.md).
 * Signing: core/storage/signing.ts.
 */
import { z } from 'zod';
import { defineRoute, idParams, uuid } from '../route';
import { ApiError, notFound } from '../../core/errors';
import { recordingsReadRepo, recordingJson } from '../../core/repos/recordings';
import { signingKey, signResource, checkSignature } from '../../core/storage/signing';
import { storageBackend, viaStorage } from '../../core/storage/backend';
import { clock } from '../../core/clock';
import { formatLegacy } from '../../core/time';
import type { AppContext } from '../context';
import { listOf } from './schemas';
import { sendCustomerFileRanges } from '../customer-file';

/** Lifetime of a playfile URL; playfiles re-signs when less than a quarter is left (idempotent otherwise). */
export const DOWNLOAD_TTL_SEC = 3600;

const keys = new WeakMap<object, string | null>();
function keyOf(ctx: AppContext): string | null {
  if (!keys.has(ctx.config)) {
    let k: string | null;
    try {
      k = signingKey(ctx.config.dataDir);
    } catch {
      k = null;
    }
    keys.set(ctx.config, k);
  }
  return keys.get(ctx.config) ?? null;
}
const notConfigured = () => new ApiError('SIGNING_NOT_CONFIGURED', 'download signing is not configured (STORAGE_SIGNING_KEY)');
const missing = () => notFound('RECORDING_NOT_FOUND', 'recording not found');

const recordingSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  owner_type: z.string(),
  owner_id: z.string(),
  activeflow_id: z.string(),
  reference_type: z.string(),
  reference_id: z.string(),
  status: z.string(),
  format: z.string(),
  on_end_flow_id: z.string(),
  filenames: z.array(z.string()),
  tm_start: z.string(),
  tm_end: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});
const playfileSchema = z.object({
  filename: z.string(),
  direction: z.enum(['in', 'out', '']),
  uri_download: z.string(),
  tm_download_expire: z.string(),
  filesize: z.number(),
  peaks: z.array(z.number()),
  duration: z.number(),
});
const tag = 'Recording';

/** Expiry aligned to a TTL/4 grid: repeated calls give the same URL until it nears expiry. */
function expiryNow(): number {
  const now = Math.floor(clock.nowMs() / 1000);
  const step = DOWNLOAD_TTL_SEC / 4;
  return (Math.floor(now / step) + 4) * step;
}

function directionOf(filename: string): 'in' | 'out' | '' {
  const m = /_(in|out)\.wav$/i.exec(filename);
  return m ? (m[1]!.toLowerCase() as 'in' | 'out') : '';
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/recordings',
    tag,
    summary: 'List recordings',
    permission: 'agent',
    paginated: true,
    query: z.object({ reference_id: uuid().optional(), page_size: z.string().optional(), page_token: z.string().optional() }),
    response: listOf(recordingSchema),
    handler: async ({ ctx, auth, page, query }) => {
      const p = await recordingsReadRepo(ctx.db).list(auth.customerId, page, query.reference_id ? { reference_id: query.reference_id } : {});
      return { result: p.result.map(recordingJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/recordings/:id',
    tag,
    summary: 'Get a recording',
    permission: 'agent',
    params: idParams,
    response: recordingSchema,
    handler: async ({ ctx, auth, params }) => {
      const r = await recordingsReadRepo(ctx.db).get(auth.customerId, params.id);
      if (!r) throw missing();
      return recordingJson(r);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/recordings/:id',
    tag,
    summary: 'Delete a recording (its files are removed)',
    permission: 'manager',
    params: idParams,
    response: recordingSchema,
    handler: async ({ ctx, auth, params }) => {
      const repo = recordingsReadRepo(ctx.db);
      const live = await repo.get(auth.customerId, params.id);
      if (!live) throw missing();
      // Files first: when object storage refuses, the recording stays (503) and the delete can be retried.
      const files = storageBackend(ctx.config).recordings;
      await viaStorage(() => Promise.all(live.filenames.map((f) => files.remove(f))));
      const r = await repo.softDelete(auth.customerId, params.id);
      if (!r) throw missing();
      return recordingJson(r);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/recordings/:id/playfiles',
    tag,
    summary: 'Files of a recording with signed, expiring download URLs',
    permission: 'agent',
    params: idParams,
    response: z.array(playfileSchema),
    handler: async ({ ctx, auth, params }) => {
      const r = await recordingsReadRepo(ctx.db).get(auth.customerId, params.id);
      if (!r) throw missing();
      const key = keyOf(ctx);
      if (!key) throw notConfigured();
      const expires = expiryNow();
      const files = storageBackend(ctx.config).recordings;
      const summaries = await viaStorage(() => Promise.all(r.filenames.map((f) => files.summary(f))));
      return r.filenames.map((filename, i) => {
        const s = summaries[i];
        const qs = signResource(key, `recording/${r.id}/${filename}`, expires);
        return {
          filename,
          direction: directionOf(filename),
          uri_download: `${ctx.config.publicUrl}/v1.0/recordingfiles/${r.id}?filename=${encodeURIComponent(filename)}&${qs}`,
          tm_download_expire: formatLegacy(new Date(expires * 1000)),
          filesize: s?.filesize ?? 0,
          peaks: s?.peaks ?? [],
          duration: s?.duration ?? 0,
        };
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/recordingfiles/:id',
    tag,
    summary: 'Download a recording file through its signed URL (from playfiles)',
    description: 'Takes one byte range (`Range: bytes=…`, Accept-Ranges: bytes), so a player can seek: 206 Partial Content with Content-Range, 416 RANGE_NOT_SATISFIABLE for a range past the end.',
    errors: [416],
    permission: 'public',
    params: idParams,
    query: z.object({ filename: z.string().max(255).optional(), expires: z.string().max(20), signature: z.string().max(100) }),
    response: z.any().describe('audio/wav'),
    handler: async ({ ctx, params, query, req, res }) => {
      const key = keyOf(ctx);
      if (!key) throw notConfigured();
      const r = await recordingsReadRepo(ctx.db).getById(params.id);
      const filename = query.filename ?? r?.filenames[0] ?? '';
      const verdict = checkSignature(key, `recording/${params.id}/${filename}`, query.expires, query.signature, Math.floor(clock.nowMs() / 1000));
      if (verdict === 'invalid') throw new ApiError('PERMISSION_DENIED', 'download signature invalid');
      if (verdict === 'expired') throw new ApiError('PERMISSION_DENIED', 'download URL expired; get a fresh one from /recordings/{id}/playfiles');
      if (!r || !r.filenames.includes(filename)) throw missing();
      const found = await sendCustomerFileRanges(req, res, { filename, contentType: 'audio/wav' }, (range) => viaStorage(() => storageBackend(ctx.config).recordings.open(filename, range)));
      if (!found) throw notFound('FILE_NOT_FOUND', 'recording file not found');
      return undefined;
    },
  }),
];
