/**
 * Providers: outbound SIP gateways. They are platform-wide (no customer_id), so only a
 * ProjectSuperAdmin manages them (as in VoIPbin); everyone else gets 403 PERMISSION_DENIED.
 * auth_password is write-only. `registration` (registration-fields.ts): the provider registers to
 * the carrier's registrar (the operator's address: not checked by the egress policy).
 */
import { z } from 'zod';
import { mediaEncryption } from './media-encryption-field';
import { codecsTextInput, codecsTextOutput } from './codecs-field';
import { DEFAULT_TRUNK_CODECS } from '../../core/calls/codecs';
import { defineRoute, idParams, text } from '../route';
import { ApiError } from '../../core/errors';
import { providersRepo, providerJson, type ProviderRow } from '../../core/repos/providers';
import { outboundRegistrationsRepo, registrationJson, type RegistrationSettings } from '../../core/repos/outbound-registrations';
import type { AppContext } from '../context';
import { refuseMovedSecret } from '../../core/secrets/key-destination';
import { registrationInput, registrationSettings, RegistrationSchema, sipHost as host, type RegistrationInput } from './registration-fields';

const dialPart = z
  .string()
  .max(32)
  .regex(/^[0-9A-Za-z*#+._-]*$/, 'digits, letters, * # + . _ -');
// Header names are RFC 3261 tokens; values one line. Core headers stay the dialler's.
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!%'*+._`~-]{1,64}$/, 'a SIP header name')
  .refine(
    (n) => !['via', 'from', 'to', 'call-id', 'cseq', 'contact', 'max-forwards', 'content-length', 'content-type', 'route', 'record-route'].includes(n.toLowerCase()),
    'this header is set by the platform',
  );
const headers = z
  .record(
    headerName,
    z
      .string()
      .max(1024)
      .regex(/^[^\r\n]*$/, 'one line'),
  )
  .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers');

const fields = {
  type: z.literal('sip').optional(),
  hostname: host,
  tech_prefix: dialPart.optional(),
  tech_postfix: dialPart.optional(),
  tech_headers: headers.optional(),
  transport: z.enum(['udp', 'tcp', 'tls']).optional(),
  auth_username: text(128).optional(),
  auth_password: text(128).optional(),
  codecs: codecsTextInput(DEFAULT_TRUNK_CODECS).optional(),
  media_encryption: mediaEncryption.optional(),
  name: text().optional(),
  detail: text(1024).optional(),
  registration: registrationInput.optional(),
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
  codecs: codecsTextOutput,
  media_encryption: mediaEncryption,
  name: z.string(),
  detail: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  registration: RegistrationSchema,
  health_status: z.enum(['unknown', 'healthy', 'unhealthy']),
  health_checked_at: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const notFound = () => new ApiError('PROVIDER_NOT_FOUND', 'provider not found');

export async function show(ctx: AppContext, rows: ProviderRow[]) {
  const regs = await outboundRegistrationsRepo(ctx.db).getMany(
    'provider',
    rows.map((p) => p.id),
  );
  return rows.map((p) => ({ ...providerJson(p), registration: registrationJson(regs.get(p.id) ?? null) }));
}

/** The settings checked before the provider is written (a 400 leaves nothing behind); undefined: unchanged. */
async function checkRegistration(ctx: AppContext, id: string | null, input: RegistrationInput | undefined): Promise<RegistrationSettings | null | undefined> {
  if (input === undefined) return undefined;
  const cur = id ? await outboundRegistrationsRepo(ctx.db).get('provider', id) : null;
  return registrationSettings(input, cur, {});
}

async function putRegistration(ctx: AppContext, id: string, s: RegistrationSettings | null | undefined): Promise<void> {
  if (s !== undefined) await outboundRegistrationsRepo(ctx.db).put('provider', id, null, s);
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/providers',
    tag: 'Provider',
    summary: 'Create a provider (ProjectSuperAdmin)',
    permission: 'superadmin',
    body: z.object(fields),
    response: ProviderSchema,
    handler: async ({ body, ctx }) => {
      const reg = await checkRegistration(ctx, null, body.registration);
      const p = await providersRepo(ctx.db).create({
        type: 'sip',
        hostname: body.hostname,
        tech_prefix: body.tech_prefix ?? '',
        tech_postfix: body.tech_postfix ?? '',
        tech_headers: body.tech_headers ?? {},
        transport: body.transport ?? 'udp',
        auth_username: body.auth_username ?? '',
        auth_password: body.auth_password ?? '',
        codecs: body.codecs ?? '',
        media_encryption: body.media_encryption ?? 'none',
        name: body.name ?? '',
        detail: body.detail ?? '',
      });
      await putRegistration(ctx, p.id, reg);
      return (await show(ctx, [p]))[0];
    },
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
      return { result: await show(ctx, p.result), next_page_token: p.next_page_token };
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
      return (await show(ctx, [p]))[0];
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
      const { type: _t, registration, ...patch } = body;
      const repo = providersRepo(ctx.db);
      const cur = await repo.get(params.id);
      if (!cur) throw notFound();
      // the stored auth_password answers only the host it was stored for (core/secrets/key-destination.ts)
      refuseMovedSecret({
        field: 'auth_password',
        placeField: 'hostname',
        stored: cur.auth_password !== '',
        kept: patch.auth_password === undefined,
        before: cur.hostname.toLowerCase(),
        after: (patch.hostname ?? cur.hostname).toLowerCase(),
      });
      const reg = await checkRegistration(ctx, params.id, registration);
      const p = await repo.update(params.id, patch);
      if (!p) throw notFound();
      await putRegistration(ctx, p.id, reg);
      return (await show(ctx, [p]))[0];
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
      return (await show(ctx, [p]))[0];
    },
  }),
];
