/**
 * /customers: every account of the platform, for its operator (ProjectSuperAdmin only; any other
 * caller gets 403 PERMISSION_DENIED). Freeze, recover and delete have the effects of the account's
 * own /auth/unregister (customers/lifecycle.ts): the status gate's cache is dropped and the
 * account's open WebSockets are rechecked (and closed) at once.
 */
import { z } from 'zod';
import { defineRoute, idParams } from '../route';
import type { AppContext } from '../context';
import { alreadyExists, invalidArgument, notFound, stateInvalid } from '../../core/errors';
import { customerJson, repos, type CustomerRow } from '../../core/repos';
import { unregisterMail } from '../../core/smtp';
import { ensureBillingAccount } from '../../core/billing/ledger';
import { deleteCustomerAccount } from '../jobs/account-deletion';
import { FROZEN_GRACE_MS } from '../jobs/account-lifecycle';
import { createMailerFromConfig } from '../auth';
import { assertEgressUrl } from '../egress-field';
import { createDefaultAdmin } from '../customers/default-admin';
import { customerChanged, freezeCustomer, recoverCustomer, statusGateOf } from '../customers/lifecycle';
import { billingAccountBody, customerFields, metadataBody, updateBillingAccountId, updateMetadata } from './customer';
import { customerSchema, listOf } from './schemas';

const customerNotFound = () => notFound('RESOURCE_NOT_FOUND', 'customer not found');
const isEmail = (v: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v);

async function existing(ctx: AppContext, id: string): Promise<CustomerRow> {
  const c = await ctx.repos.customers.get(id);
  if (!c) throw customerNotFound();
  return c;
}

async function mailQuietly(ctx: AppContext, mail: ReturnType<typeof unregisterMail>): Promise<void> {
  try {
    await createMailerFromConfig(ctx.config).send(mail);
  } catch (err) {
    ctx.logger.warn({ err, kind: mail.kind }, 'could not send account mail');
  }
}

const createBody = z.strictObject({
  ...customerFields,
  email: z.string().max(320).refine(isEmail, 'must be an email address'),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/customers',
    tag: 'Customer',
    summary: 'List customers (ProjectSuperAdmin)',
    permission: 'superadmin',
    paginated: true,
    response: listOf(customerSchema),
    handler: async ({ ctx, page }) => {
      const p = await ctx.repos.customers.list(page);
      return { result: p.result.map((c) => customerJson(c)), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers',
    tag: 'Customer',
    summary: 'Create a customer (ProjectSuperAdmin)',
    description: "An active account with a default admin agent (username = email, no password: set through the auth group's password-forgot) and an empty outbound config, as signup makes.",
    permission: 'superadmin',
    body: createBody,
    response: customerSchema,
    handler: async ({ ctx, body }) => {
      assertEgressUrl(ctx, 'webhook_uri', body.webhook_uri);
      const email = body.email.trim().toLowerCase();
      const taken = async () => (await ctx.repos.customers.getByEmail(email)) || (await ctx.repos.agents.getByUsername(email));
      if (await taken()) throw alreadyExists('a customer or agent with this email exists');
      try {
        const c = await ctx.db.transaction(async (trx) => {
          const t = repos(trx);
          const customer = await t.customers.create({ ...body, email, status: 'active', email_verified: false });
          await createDefaultAdmin(t, customer.id, email);
          await t.outboundConfigs.create({ customer_id: customer.id });
          const account = await ensureBillingAccount(trx, customer.id);
          return { ...customer, billing_account_id: account.id };
        });
        ctx.logger.info({ customer_id: c.id }, 'customer created by the operator');
        return customerJson(c);
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw alreadyExists('a customer or agent with this email exists');
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/:id',
    tag: 'Customer',
    summary: 'Get a customer (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    response: customerSchema,
    handler: async ({ ctx, params }) => customerJson(await existing(ctx, params.id)),
  }),
  defineRoute({
    method: 'delete',
    path: '/customers/:id',
    tag: 'Customer',
    summary: 'Delete a customer and every record of it (ProjectSuperAdmin)',
    description: "Unrecoverable, as the end of the frozen period. The caller's own account is refused (use /auth/unregister).",
    permission: 'superadmin',
    params: idParams,
    response: customerSchema,
    handler: async ({ ctx, params, auth, req }) => {
      if (params.id.toLowerCase() === auth.customerId.toLowerCase()) throw invalidArgument("the caller's own account is deleted through /auth/unregister");
      await existing(ctx, params.id);
      await deleteCustomerAccount(ctx.db, params.id);
      await customerChanged(ctx, statusGateOf(req), params.id);
      ctx.logger.info({ customer_id: params.id }, 'customer deleted by the operator');
      const gone = await ctx.repos.customers.get(params.id, { includeDeleted: true });
      if (!gone) throw customerNotFound();
      return customerJson(gone);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/:id/freeze',
    tag: 'Customer',
    summary: 'Freeze a customer and schedule its deletion (ProjectSuperAdmin)',
    description: "As POST /auth/unregister: status frozen, deletion after the grace period, the account's requests refused with ACCOUNT_FROZEN and its WebSockets closed. Idempotent.",
    permission: 'superadmin',
    params: idParams,
    response: customerSchema,
    handler: async ({ ctx, params, auth, req }) => {
      if (params.id.toLowerCase() === auth.customerId.toLowerCase()) throw invalidArgument("the caller's own account is frozen through /auth/unregister");
      const before = await existing(ctx, params.id);
      const frozen = await freezeCustomer(ctx.db, params.id);
      if (!frozen) throw customerNotFound();
      await customerChanged(ctx, statusGateOf(req), frozen.id);
      if (before.status !== 'frozen' && frozen.tm_deletion_scheduled) {
        ctx.logger.info({ customer_id: frozen.id }, 'customer frozen by the operator, deletion scheduled');
        await mailQuietly(ctx, unregisterMail(ctx.config.publicUrl, frozen.email, new Date(frozen.tm_deletion_scheduled.getTime() + FROZEN_GRACE_MS)));
      }
      return customerJson(frozen);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/:id/recover',
    tag: 'Customer',
    summary: 'Recover a frozen customer, cancelling its deletion (ProjectSuperAdmin)',
    description: 'As DELETE /auth/unregister. An account that is not frozen: 409 STATE_INVALID.',
    permission: 'superadmin',
    params: idParams,
    response: customerSchema,
    handler: async ({ ctx, params, req }) => {
      const r = await recoverCustomer(ctx.db, params.id);
      if (!r.ok) throw r.why === 'missing' ? customerNotFound() : stateInvalid('the customer is not frozen');
      await customerChanged(ctx, statusGateOf(req), r.customer.id);
      ctx.logger.info({ customer_id: r.customer.id }, 'customer recovered by the operator');
      return customerJson(r.customer);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customers/:id',
    tag: 'Customer',
    summary: 'Update a customer (ProjectSuperAdmin)',
    permission: 'superadmin',
    params: idParams,
    body: z.strictObject(customerFields),
    response: customerSchema,
    handler: async ({ ctx, params, body }) => {
      assertEgressUrl(ctx, 'webhook_uri', body.webhook_uri);
      const c = await ctx.repos.customers.update(params.id, body);
      if (!c) throw customerNotFound();
      return customerJson(c);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customers/:id/metadata',
    tag: 'Customer',
    summary: "Update a customer's metadata flags (ProjectSuperAdmin)",
    permission: 'superadmin',
    params: idParams,
    body: metadataBody,
    response: customerSchema,
    handler: async ({ ctx, params, body }) => {
      assertEgressUrl(ctx, 'moh_url', body.moh_url);
      return customerJson(await updateMetadata(ctx, params.id, body));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/customers/:id/billing_account_id',
    tag: 'Customer',
    summary: "Set a customer's billing account (ProjectSuperAdmin)",
    permission: 'superadmin',
    params: idParams,
    body: billingAccountBody,
    response: customerSchema,
    handler: async ({ ctx, params, body }) => customerJson(await updateBillingAccountId(ctx, params.id, body.billing_account_id)),
  }),
];
