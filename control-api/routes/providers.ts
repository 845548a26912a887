/**
 * Providers: outbound SIP gateways. They are platform-wide (no customer_id), so only a
 * ProjectSuperAdmin manages them (as in VoIPbin); everyone else gets 403 PERMISSION_DENIED.
 * auth_password is write-only.
 */
import { z } from 'zod';
import { defineRoute, idParams, text } from '../route';
import { ApiError } from '../../core/errors';
import { providersRepo, providerJson } from '../../core/repos/providers';

const host = z.string().max(255).regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:\d{1,5})?$/, 'host, IP or host:port');
const dialPart = z.string().max(32).regex(/^[0-9A-Za-z*#+._-]*$/, 'digits, letters, * # + . _ -');
// Header names are RFC 3261 tokens; values one line. Core headers stay the dialler's.
const headerName = z.string().regex(/^[A-Za-z0-9!%'*+._`~-]{1,64}$/, 'a SIP header name').refine(
  (n) => !['via', 'from', 'to', 'call-id', 'cseq', 'contact', 'max-forwards', 'content-length', 'content-type', 'route', 'record-route'].includes(n.toLowerCase()),
  'this header is set by the platform',
);
const headers = z.record(headerName, z.string().max(1024).regex(/^[^\r\n]*$/, 'one line')).refine((h) => Object.keys(h).length <= 20, 'at most 20 headers');

const fields = {
  type: z.literal('sip').optional(),
  hostname: host,
  tech_prefix: dialPart.optional(),
  tech_postfix: dialPart.optional(),
  tech_headers: headers.optional(),
  transport: z.enum(['udp', 'tcp', 'tls']).optional(),
  auth_username: text(128).optional(),
  auth_password: text(128).optional(),
  codecs: z.string().max(128).regex(/^[A-Za-z0-9/,. -]*$/, 'comma-separated codec names').optional(),
  name: text().optional(),
  detail: text(1024).optional(),
};

export const ProviderSchema = z.object({
  id: z.string(),
  type: z.literal('sip'),
  hostname: z.string(),
  tech_prefix: z.string(),
  tech_postfix: z.string(),
  tech_headers: z.record(z.string(), z.string()),
  transport: z.enum(['udp', 'tcp', 'tls']),
  auth_username: z.string(),
  codecs: z.string(),
  name: z.string(),
  detail: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  health_status: z.enum(['unknown', 'healthy', 'unhealthy']),
  health_checked_at: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const notFound = () => new ApiError('PROVIDER_NOT_FOUND', 'provider not found');

export const routes = [
  defineRoute({
    method: 'post',
    path: '/providers',
    tag: 'Provider',
    summary: 'Create a provider (ProjectSuperAdmin)',
    permission: 'superadmin',
    body: z.object(fields),
    response: ProviderSchema,
    handler: async ({ body, ctx }) =>
      providerJson(
        await providersRepo(ctx.db).create({
          type: 'sip',
          hostname: body.hostname,
          tech_prefix: body.tech_prefix ?? '',
          tech_postfix: body.tech_postfix ?? '',
          tech_headers: body.tech_headers ?? {},
          transport: body.transport ?? 'udp',
          auth_username: body.auth_username ?? '',
          auth_password: body.auth_password ?? '',
          codecs: body.codecs ?? '',
          name: body.name ?? '',
          detail: body.detail ?? '',
        }),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/providers',
    tag: 'Provider',
    summary: 'List providers (ProjectSuperAdmin)',
    permission: 'superadmin',
    paginated: true,
    response: z.object({ result: z.array(ProviderSchema), next_page_token: z.string() }),
    handler: async ({ ctx, page }) => {
      const p = await providersRepo(ctx.db).list(page);
      return { result: p.result.map(providerJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/providers/:id',
    tag: 'Provider',
    summary: 'Get a provider (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: ProviderSchema,
    handler: async ({ params, ctx }) => {
      const p = await providersRepo(ctx.db).get(params.id);
      if (!p) throw notFound();
      return providerJson(p);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/providers/:id',
    tag: 'Provider',
    summary: 'Update a provider (ProjectSuperAdmin); omitted fields stay unchanged',
    permission: 'superadmin',
    params: idParams,
    body: z.object({ ...fields, hostname: host.optional() }),
    response: ProviderSchema,
    handler: async ({ params, body, ctx }) => {
      const { type: _t, ...patch } = body;
      const p = await providersRepo(ctx.db).update(params.id, patch);
      if (!p) throw notFound();
      return providerJson(p);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/providers/:id',
    tag: 'Provider',
    summary: 'Delete a provider (ProjectSuperAdmin); its routes stop matching',
    permission: 'superadmin',
    params: idParams,
    response: ProviderSchema,
    handler: async ({ params, ctx }) => {
      const p = await providersRepo(ctx.db).softDelete(params.id);
      if (!p) throw notFound();
      return providerJson(p);
    },
  }),
];
