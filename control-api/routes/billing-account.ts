/** /billing_account: the caller's own billing account (created on first use), as the reference's singular form. */
import { defineRoute } from '../route';
import { billingAccountJson } from '../../core/repos/billing-accounts';
import { ensureBillingAccount } from '../../core/billing/ledger';
import { BillingAccountSchema, accountNamesBody, paymentInfoBody, updateAccount } from './billing';

export const routes = [
  defineRoute({
    method: 'get',
    path: '/billing_account',
    tag: 'Billing',
    summary: "Get the customer's own billing account",
    permission: 'admin',
    response: BillingAccountSchema,
    handler: async ({ auth, ctx }) => billingAccountJson(await ensureBillingAccount(ctx.db, auth.customerId)),
  }),
  defineRoute({
    method: 'put',
    path: '/billing_account',
    tag: 'Billing',
    summary: "Update the own billing account's name and detail",
    permission: 'admin',
    body: accountNamesBody,
    response: BillingAccountSchema,
    handler: async ({ auth, ctx, body }) => billingAccountJson(await updateAccount(ctx.db, (await ensureBillingAccount(ctx.db, auth.customerId)).id, body)),
  }),
  defineRoute({
    method: 'put',
    path: '/billing_account/payment_info',
    tag: 'Billing',
    summary: "Update the own billing account's payment type and method",
    permission: 'admin',
    body: paymentInfoBody,
    response: BillingAccountSchema,
    handler: async ({ auth, ctx, body }) => billingAccountJson(await updateAccount(ctx.db, (await ensureBillingAccount(ctx.db, auth.customerId)).id, body)),
  }),
];
