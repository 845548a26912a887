/**
 * /twilio (extension): the customer's Twilio-compatible credentials (docs/twilio.md, "Accounts and
 * auth"). The AccountSid is `AC` + the customer id; the AuthToken is derived, never stored
 * (core/twilio/auth-token.ts), shown masked here and whole only once, by the rotation that makes it.
 * And the account's Debugger webhook (docs/twilio.md, "Alerts and Notifications").
 */
import { z } from 'zod';
import { defineRoute } from '../route';
import { ApiError } from '../../core/errors';
import { accountSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import type { AppContext } from '../context';
import { twilioAlertsRepo } from '../../core/repos/twilio-alerts';
import { assertEgressUrl } from '../egress-field';

const credentialsSchema = z.object({
  account_sid: z.string().describe('AC + the customer id without dashes: the Twilio AccountSid and basic-auth user'),
  auth_token: z.string().describe('the AuthToken: masked on GET (last 4 characters), whole once in the rotation answer'),
  generation: z.number().int().describe('raised by each rotation; the previous token stops working at once'),
  api_base_url: z.string().describe('where Twilio clients point (…/2010-04-01)'),
});

const debuggerSchema = z.object({
  url: z.string().describe("the account's Debugger webhook: each new alert is POSTed there, signed; '' when none"),
});

const mask = (token: string) => `${'*'.repeat(token.length - 4)}${token.slice(-4)}`;

function answer(ctx: AppContext, customerId: string, generation: number, whole: boolean) {
  const token = twilioAuthToken(ctx.config.jwtSecret, customerId, generation);
  return { account_sid: accountSid(customerId), auth_token: whole ? token : mask(token), generation, api_base_url: `${ctx.config.publicUrl}/2010-04-01` };
}

export const routes = [
  defineRoute({
    method: 'get',
    path: '/twilio/credentials',
    tag: 'Customer',
    summary: 'The Twilio-compatible AccountSid and the masked AuthToken (extension)',
    permission: 'manager',
    response: credentialsSchema,
    handler: async ({ ctx, auth }) => {
      const c = await ctx.repos.customers.get(auth.customerId);
      if (!c) throw new ApiError('RESOURCE_NOT_FOUND', 'customer not found');
      return answer(ctx, c.id, c.twilio_token_generation, false);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/twilio/auth_token',
    tag: 'Customer',
    summary: 'Rotate the Twilio-compatible AuthToken; the answer holds the new token, the only time it is shown whole (extension)',
    permission: 'admin',
    response: credentialsSchema,
    handler: async ({ ctx, auth }) => {
      const row = await ctx.repos.customers.rotateTwilioToken(auth.customerId);
      if (!row) throw new ApiError('RESOURCE_NOT_FOUND', 'customer not found');
      return answer(ctx, row.id, row.twilio_token_generation, true);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/twilio/debugger_webhook',
    tag: 'Customer',
    summary: "The account's Twilio Debugger webhook URL (extension)",
    permission: 'manager',
    response: debuggerSchema,
    handler: async ({ ctx, auth }) => ({ url: (await twilioAlertsRepo(ctx.db).debuggerWebhook(auth.customerId)) ?? '' }),
  }),
  defineRoute({
    method: 'put',
    path: '/twilio/debugger_webhook',
    tag: 'Customer',
    summary: "Set the account's Twilio Debugger webhook URL ('' clears it); each new alert is POSTed there (extension)",
    permission: 'admin',
    body: z.object({
      url: z.union([
        z.literal(''),
        z
          .string()
          .url()
          .max(2048)
          .regex(/^https?:\/\//i, 'must be an http or https URL'),
      ]),
    }),
    response: debuggerSchema,
    handler: async ({ ctx, auth, body }) => {
      assertEgressUrl(ctx, 'url', body.url);
      await twilioAlertsRepo(ctx.db).setDebuggerWebhook(auth.customerId, body.url || null);
      return { url: body.url };
    },
  }),
];
