/**
 * Trunks: a customer's PBX calling in, accepted by source address (auth type ip: allowed_ips holds
 * IPs or CIDRs) and/or digest (auth type basic: username/password at
 * `{domain_name}.trunk.{SIP_DOMAIN}`). Customer admins only; the password is write-only.
 * `registration` (registration-fields.ts): the platform registers to the customer's registrar (its
 * host must pass the egress policy) and calls arriving through it are this trunk's.
 */
import net from 'node:net';
import { z } from 'zod';
import { defineRoute, idParams, text } from '../route';
import type { AppContext } from '../context';
import { ApiError, alreadyExists, invalidArgument } from '../../core/errors';
import { DEFAULT_DTMF_MODE } from '../../core/calls/dtmf-mode';
import { trunksRepo, trunkJson, type TrunkRow, type TrunkAuthType } from '../../core/repos/trunks';
import { outboundRegistrationsRepo, registrationJson, type RegistrationSettings } from '../../core/repos/outbound-registrations';
import { registrationInput, registrationSettings, RegistrationSchema, type RegistrationInput } from './registration-fields';
import { mediaEncryption } from './media-encryption-field';
import { dtmfMode } from './dtmf-mode-field';
import { codecsInput, codecsOutput, normaliseCodecs } from './codecs-field';
import { DEFAULT_TRUNK_CODECS } from '../../core/calls/codecs';

/** An IPv4/IPv6 address or CIDR block with a valid prefix length. */
export function isIpOrCidr(v: string): boolean {
  const [addr, len, ...rest] = v.split('/');
  if (rest.length > 0) return false;
  const fam = net.isIP(addr);
  if (fam === 0) return false;
  if (len === undefined) return true;
  if (!/^\d{1,3}$/.test(len)) return false;
  return Number(len) <= (fam === 4 ? 32 : 128);
}

const authTypes = z
  .array(z.enum(['basic', 'ip']))
  .min(1)
  .max(2);
const ips = z.array(z.string().max(64).refine(isIpOrCidr, 'an IP address or CIDR')).max(100);
const domainLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and -');

export const TrunkSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  detail: z.string(),
  domain_name: z.string(),
  realm: z.string().describe('{domain_name}.trunk.{SIP_DOMAIN}: digest realm and Request-URI host'),
  auth_types: z.array(z.enum(['basic', 'ip'])),
  username: z.string(),
  allowed_ips: z.array(z.string()),
  media_encryption: mediaEncryption,
  dtmf_mode: dtmfMode,
  codecs: codecsOutput,
  registration: RegistrationSchema,
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const notFound = () => new ApiError('TRUNK_NOT_FOUND', 'trunk not found');

/** The auth settings must be usable: basic needs credentials, ip needs addresses. */
function checkAuth(t: { auth_types: TrunkAuthType[]; username: string; password: string; allowed_ips: string[] }): void {
  if (t.auth_types.includes('basic') && (!t.username || t.password.length < 8)) {
    throw invalidArgument('auth type basic needs a username and a password of at least 8 characters');
  }
  if (t.auth_types.includes('ip') && t.allowed_ips.length === 0) throw invalidArgument('auth type ip needs allowed_ips');
}

async function showAll(ctx: AppContext, rows: TrunkRow[]) {
  const regs = await outboundRegistrationsRepo(ctx.db).getMany(
    'trunk',
    rows.map((t) => t.id),
  );
  return rows.map((t) => ({ ...trunkJson(t, { sipDomain: ctx.config.sipDomain }), registration: registrationJson(regs.get(t.id) ?? null) }));
}

const show = async (ctx: AppContext, t: TrunkRow) => (await showAll(ctx, [t]))[0]!;

/** The settings checked before the trunk is written (a 400 leaves nothing behind); undefined: unchanged. */
async function checkRegistration(ctx: AppContext, id: string | null, input: RegistrationInput | undefined): Promise<RegistrationSettings | null | undefined> {
  if (input === undefined) return undefined;
  const cur = id ? await outboundRegistrationsRepo(ctx.db).get('trunk', id) : null;
  return registrationSettings(input, cur, { egress: ctx.egress });
}

async function putRegistration(ctx: AppContext, t: TrunkRow, s: RegistrationSettings | null | undefined): Promise<void> {
  if (s !== undefined) await outboundRegistrationsRepo(ctx.db).put('trunk', t.id, t.customer_id, s);
}

const isUnique = (e: unknown) => (e as { code?: string })?.code === '23505';

/** The body fields create and update both take as optional, with the same rules. */
const optionalTrunkFields = {
  allowed_ips: ips.optional(),
  media_encryption: mediaEncryption.optional(),
  dtmf_mode: dtmfMode.optional(),
  codecs: codecsInput(DEFAULT_TRUNK_CODECS).optional(),
  registration: registrationInput.optional(),
};

export const routes = [
  defineRoute({
    method: 'post',
    path: '/trunks',
    tag: 'Trunk',
    summary: 'Create a trunk (admin)',
    permission: 'admin',
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      domain_name: domainLabel,
      auth_types: authTypes,
      username: z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, . _ -')
        .optional(),
      password: z
        .string()
        .max(128)
        .regex(/^[\x21-\x7e]*$/, 'printable ASCII without spaces')
        .optional(),
      ...optionalTrunkFields,
    }),
    response: TrunkSchema,
    handler: async ({ body, auth, ctx }) => {
      const f = {
        name: body.name ?? '',
        detail: body.detail ?? '',
        auth_types: [...new Set(body.auth_types)],
        username: body.username ?? '',
        password: body.password ?? '',
        allowed_ips: body.allowed_ips ?? [],
        media_encryption: body.media_encryption ?? 'none',
        dtmf_mode: body.dtmf_mode ?? DEFAULT_DTMF_MODE,
        codecs: normaliseCodecs(body.codecs ?? DEFAULT_TRUNK_CODECS),
      };
      checkAuth(f);
      const reg = await checkRegistration(ctx, null, body.registration);
      try {
        const t = await trunksRepo(ctx.db).create(auth.customerId, body.domain_name, f);
        await putRegistration(ctx, t, reg);
        return await show(ctx, t);
      } catch (e) {
        if (isUnique(e)) throw alreadyExists('domain_name is taken');
        throw e;
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/trunks',
    tag: 'Trunk',
    summary: 'List trunks (admin)',
    permission: 'admin',
    paginated: true,
    response: z.object({ result: z.array(TrunkSchema), next_page_token: z.string() }),
    handler: async ({ auth, ctx, page }) => {
      const p = await trunksRepo(ctx.db).list(auth.customerId, page);
      return { result: await showAll(ctx, p.result), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/trunks/:id',
    tag: 'Trunk',
    summary: 'Get a trunk (admin)',
    permission: 'admin',
    params: idParams,
    response: TrunkSchema,
    handler: async ({ params, auth, ctx }) => {
      const t = await trunksRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!t) throw notFound();
      return show(ctx, t);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/trunks/:id',
    tag: 'Trunk',
    summary: 'Update a trunk (admin); omitted fields stay unchanged',
    permission: 'admin',
    params: idParams,
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      auth_types: authTypes.optional(),
      username: z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9._-]*$/)
        .optional(),
      password: z
        .string()
        .max(128)
        .regex(/^[\x21-\x7e]*$/)
        .optional(),
      ...optionalTrunkFields,
    }),
    response: TrunkSchema,
    handler: async ({ params, body: { registration, ...body }, auth, ctx }) => {
      const repo = trunksRepo(ctx.db);
      const cur = await repo.getOwned(auth.customerId, params.id);
      if (!cur) throw notFound();
      const next = { ...cur, ...body, auth_types: body.auth_types ? [...new Set(body.auth_types)] : cur.auth_types };
      checkAuth(next);
      const reg = await checkRegistration(ctx, cur.id, registration);
      const t = await repo.update(params.id, { ...body, ...(body.auth_types ? { auth_types: next.auth_types } : {}), ...(body.codecs ? { codecs: normaliseCodecs(body.codecs) } : {}) });
      if (!t) throw notFound();
      await putRegistration(ctx, t, reg);
      return show(ctx, t);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/trunks/:id',
    tag: 'Trunk',
    summary: 'Delete a trunk (admin)',
    permission: 'admin',
    params: idParams,
    response: TrunkSchema,
    handler: async ({ params, auth, ctx }) => {
      const repo = trunksRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
      const t = await repo.softDelete(params.id);
      if (!t) throw notFound();
      return show(ctx, t);
    },
  }),
];
