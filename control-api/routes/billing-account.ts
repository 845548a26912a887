/**
 * /billing_account: the caller's own billing account (created on first use), as the reference's singular
 * form, and the Paddle customer portal of the Paddle customer the operator linked it to
 * (core/carriers/paddle.ts, through the egress policy; PADDLE_API_URL, PADDLE_API_KEY).
 */
import { z } from 'zod';
import { defineRoute } from '../route';
import { invalidArgument, serviceUnavailable } from '../../core/errors';
import { EgressFailed, EgressRefused } from '../../core/net';
import { PaddleClient, PaddleError, paddleApiKey, paddleApiUrl } from '../../core/carriers/paddle';
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
  defineRoute({
    method: 'post',
    path: '/billing_account/paddle_portal_session',
    tag: 'Billing',
    summary: 'Create Paddle portal session',
    description: 'A Paddle customer portal URL (valid for a limited time) for the Paddle customer the operator linked to the own billing account. No link: 400; Paddle not configured or failing: 503.',
    permission: 'admin',
    response: z.object({ url: z.string().describe('The Paddle Customer Portal URL. Valid for a limited time.') }),
    handler: async ({ auth, ctx }) => {
      const key = paddleApiKey();
      if (!key) throw serviceUnavailable('the Paddle customer portal is not configured on this platform (PADDLE_API_KEY)');
      const account = await ensureBillingAccount(ctx.db, auth.customerId);
      if (!account.paddle_customer_id) throw invalidArgument('no Paddle subscription is linked to this billing account');
      try {
        return { url: await new PaddleClient(paddleApiUrl(), key, ctx.egress).portalSessionUrl(account.paddle_customer_id) };
      } catch (e) {
        if (e instanceof PaddleError || e instanceof EgressRefused || e instanceof EgressFailed) {
          ctx.logger.warn({ err: e.message, billing_account_id: account.id }, 'paddle portal session failed');
          throw serviceUnavailable('the Paddle customer portal could not be reached; try again later');
        }
        throw e;
      }
    },
  }),
];
