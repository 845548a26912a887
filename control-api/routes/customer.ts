/** /customer (the caller's own account) and /me (the calling agent). */
import { z } from 'zod';
import { defineRoute, text, uuid } from '../route';
import type { AppContext } from '../context';
import { ApiError, directAccessNotSupported, invalidParameter, notFound } from '../../core/errors';
import { agentJson, customerJson, type CustomerRow } from '../../core/repos';
import { billingAccountsRepo } from '../../core/repos/billing-accounts';
import { agentSchema, customerSchema } from './schemas';
import { assertEgressUrl } from '../egress-field';

const webhookMethod = z.enum(['', 'POST', 'GET', 'PUT', 'DELETE']);
const webhookUri = z
  .string()
  .max(2048)
  .refine((v) => {
    if (v === '') return true;
    try {
      return ['http:', 'https:'].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

/** The editable fields of a customer (PUT /customer, and the ProjectSuperAdmin's /customers forms). */
export const customerFields = {
  name: text().optional(),
  detail: text(1024).optional(),
  phone_number: z.union([z.literal(''), z.string().regex(/^\+[1-9]\d{1,14}$/, 'must be E.164 (+ and digits)')]).optional(),
  address: text(1024).optional(),
  webhook_method: webhookMethod.optional(),
  webhook_uri: webhookUri.optional(),
};

/** The reference's CustomerManagerMetadata: platform behaviour flags, each optional. */
export const metadataBody = z.strictObject({
  rtp_debug: z.boolean().optional().describe("capture the customer's calls' RTP as PCAP (debugging; default false)"),
  cdr_webhook: z.boolean().optional().describe("send a call_cdr event (the call's export record) to the webhook when each call ends (default false; docs/observability.md)"),
  moh_url: webhookUri.optional().describe("the music a held party hears: a WAV or MP3 URL, fetched through the egress policy; '' (default) the platform's own (docs/pbx.md)"),
});
export const billingAccountBody = z.strictObject({ billing_account_id: uuid().describe('a live billing account of the customer') });

/** Merges the flags into the customer's metadata (absent flags keep their value). */
export async function updateMetadata(ctx: AppContext, customerId: string, flags: z.output<typeof metadataBody>): Promise<CustomerRow> {
  const c = await ctx.repos.customers.get(customerId);
  if (!c) throw notFound();
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const out = await ctx.repos.customers.update(customerId, { metadata: { ...(c.metadata ?? {}), ...defined } });
  if (!out) throw notFound();
  return out;
}

/** Points the customer at one of its own live billing accounts (another customer's: BILLING_ACCOUNT_NOT_FOUND). */
export async function updateBillingAccountId(ctx: AppContext, customerId: string, accountId: string): Promise<CustomerRow> {
  const a = await billingAccountsRepo(ctx.db).get(accountId);
  if (!a || a.customer_id !== customerId) throw new ApiError('BILLING_ACCOUNT_NOT_FOUND', 'billing account not found');
  const out = await ctx.repos.customers.update(customerId, { billing_account_id: a.id });
  if (!out) throw notFound();
  return out;
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/customer',
    tag: 'Customer',
    summary: 'Get the current customer',
    permission: 'agent',
    response: customerSchema,
    handler: async ({ ctx, auth }) => {
      const c = await ctx.repos.customers.get(auth.customerId);
      if (!c) throw notFound();
      return customerJson(c, { secret: 'masked' });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customer',
    tag: 'Customer',
    summary: 'Update the current customer',
    description: 'Fields left out keep their value. email may be sent back unchanged (clients send the whole record); changing it goes through the auth group, not here.',
    permission: 'admin',
    body: z.strictObject({ ...customerFields, email: z.string().max(320).optional() }),
    response: customerSchema,
    handler: async ({ ctx, auth, body }) => {
      assertEgressUrl(ctx, 'webhook_uri', body.webhook_uri);
      const { email, ...changes } = body;
      if (email !== undefined) {
        const current = await ctx.repos.customers.get(auth.customerId);
        if (!current) throw notFound();
        if (email.toLowerCase() !== current.email.toLowerCase()) throw invalidParameter('email', 'email cannot be changed here: use the auth group');
      }
      const c = await ctx.repos.customers.update(auth.customerId, changes);
      if (!c) throw notFound();
      return customerJson(c, { secret: 'masked' });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customer/webhook_secret',
    tag: 'Customer',
    summary: 'Rotate the webhook signing secret; the answer holds the new secret, the only time it is shown whole (extension)',
    description:
      'No body. A new webhook_secret replaces the old one at once: every delivery attempt from now on (retries of earlier events too) is signed with the new secret. Reads (GET and PUT /customer) show it masked: its last 4 characters.',
    permission: 'admin',
    response: customerSchema,
    handler: async ({ ctx, auth, res }) => {
      const c = await ctx.repos.customers.rotateWebhookSecret(auth.customerId);
      if (!c) throw notFound();
      res.set('Cache-Control', 'no-store');
      return customerJson(c, { secret: 'whole' });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customer/metadata',
    tag: 'Customer',
    summary: "Update the current customer's metadata flags",
    permission: 'admin',
    body: metadataBody,
    response: customerSchema,
    handler: async ({ ctx, auth, body }) => {
      assertEgressUrl(ctx, 'moh_url', body.moh_url);
      return customerJson(await updateMetadata(ctx, auth.customerId, body));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customer/billing_account_id',
    tag: 'Customer',
    summary: "Set the current customer's billing account",
    permission: 'admin',
    body: billingAccountBody,
    response: customerSchema,
    handler: async ({ ctx, auth, body }) => customerJson(await updateBillingAccountId(ctx, auth.customerId, body.billing_account_id)),
  }),
  defineRoute({
    method: 'get',
    path: '/me',
    tag: 'Me',
    summary: 'Get the logged-in agent',
    permission: 'agent',
    jwtOnly: true,
    response: agentSchema,
    handler: async ({ ctx, auth }) => {
      if (auth.kind !== 'agent' && auth.kind !== 'delegate') throw directAccessNotSupported();
      const a = await ctx.repos.agents.get(auth.agentId);
      if (!a) throw notFound();
      return agentJson(a);
    },
  }),
];
