/**
 * /emails: sent through SMTP (SMTP_URL) or written to the outbox; attachments are recordings of the
 * customer (their WAV files). Charged per destination (402 INSUFFICIENT_BALANCE writes nothing).
 * Status: initiated → processed (accepted by the SMTP server) | dropped (refused) | deferred.
 */
import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { defineRoute, idParams, uuid } from '../route';
import { listOf, legacyTime, uuidOut } from './schemas';
import { emailJson, emailsRepo, EMAIL_STATUSES } from '../../core/repos/emails';
import { sendEmail, MAX_EMAIL_DESTINATIONS } from '../../core/email/send';
import { messagingDeps } from '../messaging/deps';
import { addressIn, addressOut } from './messages';

export const emailSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  activeflow_id: uuidOut(),
  source: addressOut,
  destinations: z.array(addressOut),
  status: z.enum(EMAIL_STATUSES),
  subject: z.string(),
  content: z.string(),
  attachments: z.array(z.object({ reference_type: z.enum(['', 'recording']), reference_id: uuidOut() })),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const notFound = () => new ApiError('EMAIL_NOT_FOUND', 'email not found');

export const routes = [
  defineRoute({
    method: 'post',
    path: '/emails',
    tag: 'Email',
    summary: 'Send an email',
    permission: 'agent',
    body: z.object({
      destinations: z.array(addressIn).min(1).max(MAX_EMAIL_DESTINATIONS),
      subject: z.string().max(998),
      content: z.string().max(100_000),
      attachments: z.array(z.strictObject({ reference_type: z.enum(['', 'recording']), reference_id: uuid() })).max(20),
    }),
    response: emailSchema,
    handler: async ({ body, auth, ctx }) => {
      const deps = messagingDeps(ctx);
      return emailJson(await sendEmail(deps, auth.customerId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/emails',
    tag: 'Email',
    summary: 'List emails',
    permission: 'agent',
    paginated: true,
    response: listOf(emailSchema),
    handler: async ({ auth, ctx, page }) => {
      const p = await emailsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(emailJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/emails/:id',
    tag: 'Email',
    summary: 'Get an email',
    permission: 'agent',
    params: idParams,
    response: emailSchema,
    handler: async ({ params, auth, ctx }) => {
      const e = await emailsRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!e) throw notFound();
      return emailJson(e);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/emails/:id',
    tag: 'Email',
    summary: 'Delete an email',
    permission: 'manager',
    params: idParams,
    response: emailSchema,
    handler: async ({ params, auth, ctx }) => {
      const e = await emailsRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!e) throw notFound();
      const json = emailJson(e);
      await messagingDeps(ctx).publish('email_deleted', json);
      return json;
    },
  }),
];
