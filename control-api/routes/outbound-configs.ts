/** /outbound_configs: destination whitelist (lowercase ISO 3166 alpha-2), codecs, default source number. */
import { z } from 'zod';
import { defineRoute, idParams, text, uuid } from '../route';
import { invalidArgument, notFound } from '../../core/errors';
import { outboundConfigJson, type OutboundConfigFields } from '../../core/repos';
import { EMPTY_UUID } from '../../core/ids';
import type { AppContext } from '../context';
import { ISO_ALPHA2 } from './iso-countries';
import { listOf, outboundConfigSchema } from './schemas';
import { activeNormalNumberExists } from '../../core/repos/numbers';

const country = z
  .string()
  .regex(/^[a-z]{2}$/, 'must be a lowercase ISO 3166 alpha-2 code')
  .refine((c) => ISO_ALPHA2.has(c), 'is not an ISO 3166 alpha-2 country code');

const CODECS = /^[A-Za-z0-9.\-_/]+(,[A-Za-z0-9.\-_/]+)*$/;

const fields = z.strictObject({
  name: text().optional(),
  detail: text(1024).optional(),
  destination_whitelist: z.array(country).max(300).nullable().optional().describe('null or absent leaves it unchanged; [] denies all PSTN calls'),
  codecs: z
    .union([z.literal(''), z.string().max(256).regex(CODECS, 'must be a comma-separated codec list')])
    .nullable()
    .optional(),
  default_outgoing_source_number_id: uuid().nullable().optional().describe('an active normal number of this customer; the empty UUID clears it'),
});

/** Drops nulls (= leave unchanged), de-duplicates the whitelist and checks the default source number. */
async function normalise(ctx: AppContext, customerId: string, body: z.output<typeof fields>): Promise<OutboundConfigFields> {
  const out: OutboundConfigFields = {};
  if (body.name !== undefined) out.name = body.name;
  if (body.detail !== undefined) out.detail = body.detail;
  if (body.destination_whitelist != null) out.destination_whitelist = [...new Set(body.destination_whitelist)];
  if (body.codecs != null) out.codecs = body.codecs;
  const n = body.default_outgoing_source_number_id;
  if (n != null) {
    if (n !== EMPTY_UUID) await checkSourceNumber(ctx, customerId, n);
    out.default_outgoing_source_number_id = n;
  }
  return out;
}

/**
 * The default source number must be an active `normal` number of the same customer. Until the
 * numbers table exists (numbers issue), no number can qualify, so any non-empty id is refused.
 */
async function checkSourceNumber(ctx: AppContext, customerId: string, numberId: string): Promise<void> {
  if (await activeNormalNumberExists(ctx.db, customerId, numberId)) return;
  throw invalidArgument('default_outgoing_source_number_id: must be an active normal number of this customer', [
    { field: 'default_outgoing_source_number_id', issue: 'not an active normal number of this customer' },
  ]);
}

/** The customer's oldest live config (signup makes one); 404 when every one was deleted. */
async function ownConfig(ctx: AppContext, customerId: string) {
  const o = await ctx.repos.outboundConfigs.getForCustomer(customerId);
  if (!o) throw notFound('RESOURCE_NOT_FOUND', 'the customer has no outbound config');
  return o;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/outbound_configs',
    tag: 'Customer',
    summary: 'List outbound configs',
    permission: 'admin',
    paginated: true,
    response: listOf(outboundConfigSchema),
    handler: async ({ ctx, auth, page }) => {
      const p = await ctx.repos.outboundConfigs.listByCustomer(auth.customerId, page);
      return { result: p.result.map(outboundConfigJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/outbound_configs',
    tag: 'Customer',
    summary: 'Create an outbound config',
    permission: 'admin',
    body: fields,
    response: outboundConfigSchema,
    handler: async ({ ctx, auth, body }) => {
      const f = await normalise(ctx, auth.customerId, body);
      return outboundConfigJson(await ctx.repos.outboundConfigs.create({ ...f, customer_id: auth.customerId }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outbound_configs/:id',
    tag: 'Customer',
    summary: 'Get an outbound config',
    permission: 'admin',
    params: idParams,
    response: outboundConfigSchema,
    handler: async ({ ctx, auth, params }) => {
      const o = await ctx.repos.outboundConfigs.get(params.id, { customerId: auth.customerId });
      if (!o) throw notFound();
      return outboundConfigJson(o);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/outbound_configs/:id',
    tag: 'Customer',
    summary: 'Update an outbound config (absent or null fields keep their value)',
    permission: 'admin',
    params: idParams,
    body: fields,
    response: outboundConfigSchema,
    handler: async ({ ctx, auth, params, body }) => {
      if (!(await ctx.repos.outboundConfigs.get(params.id, { customerId: auth.customerId }))) throw notFound();
      const f = await normalise(ctx, auth.customerId, body);
      const o = await ctx.repos.outboundConfigs.update(params.id, f, { customerId: auth.customerId });
      if (!o) throw notFound();
      return outboundConfigJson(o);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/outbound_configs/:id',
    tag: 'Customer',
    summary: 'Delete an outbound config',
    permission: 'admin',
    params: idParams,
    response: outboundConfigSchema,
    handler: async ({ ctx, auth, params }) => {
      const o = await ctx.repos.outboundConfigs.softDelete(params.id, { customerId: auth.customerId });
      if (!o) throw notFound();
      return outboundConfigJson(o);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/outbound_config',
    tag: 'Customer',
    summary: "Get the customer's own outbound config (the one outbound dialling uses)",
    permission: 'admin',
    response: outboundConfigSchema,
    handler: async ({ ctx, auth }) => outboundConfigJson(await ownConfig(ctx, auth.customerId)),
  }),
  defineRoute({
    method: 'put',
    path: '/outbound_config',
    tag: 'Customer',
    summary: "Update the customer's own outbound config (absent or null fields keep their value)",
    permission: 'admin',
    body: fields,
    response: outboundConfigSchema,
    handler: async ({ ctx, auth, body }) => {
      const current = await ownConfig(ctx, auth.customerId);
      const f = await normalise(ctx, auth.customerId, body);
      const o = await ctx.repos.outboundConfigs.update(current.id, f, { customerId: auth.customerId });
      if (!o) throw notFound();
      return outboundConfigJson(o);
    },
  }),
];
