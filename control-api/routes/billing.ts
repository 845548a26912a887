/**
 * Billing accounts and the billing ledger. Every customer has one account (created on first use);
 * balance is in micros (`balance_credit`, 1 USD = 1,000,000) and in currency units (`balance`).
 *
 * Who is "admin" for balance-add: a ProjectSuperAdmin (the platform operator), as in VoIPbin's
 * balance_add_force. A customer admin adding credit to their own prepaid account would be free money.
 * Customer admins read their own account and ledger; a ProjectSuperAdmin reads every account.
 * VoIPbin's spellings /billing_accounts… and …/balance_add_force are accepted as aliases.
 */
import { z } from 'zod';
import type { Request } from 'express';
import { defineRoute, idParams, text, type AnyRoute } from '../route';
import type { AuthContext } from '../context';
import { ApiError, invalidArgument, permissionDenied } from '../../core/errors';
import { PADDLE_CUSTOMER_ID } from '../../core/carriers/paddle';
import { isProjectSuperAdmin } from '../../core/permissions';
import { newId } from '../../core/ids';
import { billingAccountsRepo, billingAccountJson, MICROS_PER_UNIT, type BillingAccountRow } from '../../core/repos/billing-accounts';
import { billingsRepo, billingJson } from '../../core/repos/billings';
import { addBalance, ensureBillingAccount, subtractBalance } from '../../core/billing/ledger';
import type { Db } from '../../core/db/knex';

export const BillingAccountSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  detail: z.string(),
  status: z.enum(['active', 'frozen', 'deleted']),
  plan_type: z.string(),
  plan_status: z.string(),
  balance: z.number().describe('balance_credit in currency units'),
  balance_credit: z.number().int().describe('micros (1 USD = 1,000,000)'),
  balance_token: z.number().int(),
  payment_type: z.string(),
  payment_method: z.string(),
  paddle_customer_id: z.string().describe("the linked Paddle customer (ctm_...), '' when none"),
  tm_last_topup: z.string(),
  tm_next_topup: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

export const BillingSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  account_id: z.string(),
  transaction_type: z.enum(['usage', 'top_up', 'adjustment', 'refund']),
  status: z.enum(['progressing', 'end', 'pending', 'finished']),
  reference_type: z.string(),
  reference_id: z.string(),
  cost_type: z.string(),
  usage_duration: z.number().int(),
  billable_units: z.number().int(),
  rate_token_per_unit: z.number().int(),
  rate_credit_per_unit: z.number().int(),
  amount_token: z.number().int(),
  amount_credit: z.number().int(),
  balance_token_snapshot: z.number().int(),
  balance_credit_snapshot: z.number().int(),
  tm_billing_start: z.string(),
  tm_billing_end: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const accountNotFound = () => new ApiError('BILLING_ACCOUNT_NOT_FOUND', 'billing account not found');

export async function visibleAccount(db: Db, auth: AuthContext, id: string): Promise<BillingAccountRow> {
  await ensureBillingAccount(db, auth.customerId);
  const a = await billingAccountsRepo(db).get(id);
  if (!a || (a.customer_id !== auth.customerId && !isProjectSuperAdmin(auth.permission))) throw accountNotFound();
  return a;
}

const MAX_TOPUP = 1_000_000 * MICROS_PER_UNIT;

/** The amount of a balance add or subtract in micros: exactly one of balance (units) or balance_credit (micros). */
const amountBody = z.object({ balance: z.number().positive().optional(), balance_credit: z.number().int().positive().optional() });
function amountOf(body: z.output<typeof amountBody>): number {
  if ((body.balance === undefined) === (body.balance_credit === undefined)) throw invalidArgument('give exactly one of balance or balance_credit');
  const micros = body.balance_credit ?? Math.round((body.balance as number) * MICROS_PER_UNIT);
  if (micros <= 0 || micros > MAX_TOPUP) throw invalidArgument(`amount must be between 1 micro and ${MAX_TOPUP / MICROS_PER_UNIT}`);
  return micros;
}

/** The Idempotency-Key header (or a fresh key: no retry protection). */
function idempotencyKeyOf(req: Request): string {
  const key = req.get('idempotency-key');
  if (key !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(key)) throw invalidArgument('Idempotency-Key: 1-64 of A-Z a-z 0-9 _ -');
  return key ?? newId();
}

export const accountNamesBody = z.object({ name: text().optional(), detail: text(1024).optional() });
/** The operator's form of the update: also the linked Paddle customer ('' unlinks). */
const operatorAccountBody = accountNamesBody.extend({
  paddle_customer_id: z
    .union([z.literal(''), z.string().regex(PADDLE_CUSTOMER_ID, 'must be a Paddle customer id (ctm_ and lower-case letters and digits)')])
    .optional()
    .describe("the Paddle customer (ctm_...) this account is linked to, '' to unlink; ProjectSuperAdmin only"),
});
export const paymentInfoBody = z.object({
  payment_type: z.enum(['', 'prepaid']).optional(),
  payment_method: z.enum(['', 'credit card']).optional(),
});

/** Applies a name/detail or payment info change to a visible account. */
export async function updateAccount(
  db: Db,
  id: string,
  patch: Partial<Pick<BillingAccountRow, 'name' | 'detail' | 'payment_type' | 'payment_method' | 'paddle_customer_id'>>,
): Promise<BillingAccountRow> {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const a = await billingAccountsRepo(db).update(id, defined);
  if (!a) throw accountNotFound();
  return a;
}

interface AccountPaths {
  add: string;
  subtract: string;
  paymentInfo: string;
}

function accountRoutes(base: string, paths: AccountPaths): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: base,
      tag: 'Billing',
      summary: 'List billing accounts (own; every account for a ProjectSuperAdmin)',
      permission: 'admin',
      paginated: true,
      response: z.object({ result: z.array(BillingAccountSchema), next_page_token: z.string() }),
      handler: async ({ auth, ctx, page }) => {
        await ensureBillingAccount(ctx.db, auth.customerId);
        const filter = isProjectSuperAdmin(auth.permission) ? {} : { customerId: auth.customerId };
        const p = await billingAccountsRepo(ctx.db).list(page, filter);
        return { result: p.result.map(billingAccountJson), next_page_token: p.next_page_token };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      tag: 'Billing',
      summary: 'Get a billing account',
      permission: 'admin',
      params: idParams,
      response: BillingAccountSchema,
      handler: async ({ params, auth, ctx }) => billingAccountJson(await visibleAccount(ctx.db, auth, params.id)),
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:id/${paths.add}`,
      tag: 'Billing',
      summary: 'Add balance to a billing account (ProjectSuperAdmin)',
      description: 'balance: amount in currency units (e.g. 10.5), or balance_credit: micros. An Idempotency-Key header makes retries safe.',
      permission: 'superadmin',
      params: idParams,
      body: amountBody,
      response: BillingAccountSchema,
      handler: async ({ params, body, ctx, req }) => billingAccountJson(await addBalance(ctx.db, params.id, amountOf(body), `top_up:${params.id}:${idempotencyKeyOf(req)}`)),
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:id/${paths.subtract}`,
      tag: 'Billing',
      summary: 'Subtract balance from a billing account (ProjectSuperAdmin)',
      description: 'An adjustment in the ledger; the balance may go below zero. Same body and Idempotency-Key as the add.',
      permission: 'superadmin',
      params: idParams,
      body: amountBody,
      response: BillingAccountSchema,
      handler: async ({ params, body, ctx, req }) => billingAccountJson(await subtractBalance(ctx.db, params.id, amountOf(body), `adjust:${params.id}:${idempotencyKeyOf(req)}`)),
    }),
    defineRoute({
      method: 'put',
      path: `${base}/:id`,
      tag: 'Billing',
      summary: "Update a billing account's name and detail (and, for a ProjectSuperAdmin, its linked Paddle customer)",
      permission: 'admin',
      params: idParams,
      body: operatorAccountBody,
      response: BillingAccountSchema,
      handler: async ({ params, body, auth, ctx }) => {
        if (body.paddle_customer_id !== undefined && !isProjectSuperAdmin(auth.permission)) throw permissionDenied('only the platform operator links a billing account to a Paddle customer');
        return billingAccountJson(await updateAccount(ctx.db, (await visibleAccount(ctx.db, auth, params.id)).id, body));
      },
    }),
    defineRoute({
      method: 'put',
      path: `${base}/:id/${paths.paymentInfo}`,
      tag: 'Billing',
      summary: "Update a billing account's payment type and method",
      permission: 'admin',
      params: idParams,
      body: paymentInfoBody,
      response: BillingAccountSchema,
      handler: async ({ params, body, auth, ctx }) => billingAccountJson(await updateAccount(ctx.db, (await visibleAccount(ctx.db, auth, params.id)).id, body)),
    }),
  ];
}

export const routes: AnyRoute[] = [
  ...accountRoutes('/billing-accounts', { add: 'balance-add', subtract: 'balance-subtract', paymentInfo: 'payment-info' }),
  ...accountRoutes('/billing_accounts', { add: 'balance_add_force', subtract: 'balance_subtract_force', paymentInfo: 'payment_info' }),
  defineRoute({
    method: 'get',
    path: '/billings',
    tag: 'Billing',
    summary: "List the customer's billing records (newest first)",
    permission: 'admin',
    paginated: true,
    response: z.object({ result: z.array(BillingSchema), next_page_token: z.string() }),
    handler: async ({ auth, ctx, page }) => {
      const p = await billingsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(billingJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/billings/:id',
    tag: 'Billing',
    summary: 'Get a billing record',
    permission: 'admin',
    params: idParams,
    response: BillingSchema,
    handler: async ({ params, auth, ctx }) => {
      const b = await billingsRepo(ctx.db).get(params.id);
      if (!b || b.customer_id !== auth.customerId) throw new ApiError('BILLING_NOT_FOUND', 'billing not found');
      return billingJson(b);
    },
  }),
];
