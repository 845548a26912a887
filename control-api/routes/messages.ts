/**
 * /messages: SMS from an owned normal number to up to 100 E.164 destinations, one delivery status
 * per target (queued → sent → delivered | failed, gw_timeout, dlr_timeout). Charged per target and
 * segment (402 INSUFFICIENT_BALANCE writes nothing); 503 when no SMS provider is configured.
 */
import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { defineRoute, idParams } from '../route';
import { listOf, legacyTime, uuidOut } from './schemas';
import { messageJson, messagesRepo, TARGET_STATUSES } from '../../core/repos/messages';
import { sendSms, MAX_SMS_DESTINATIONS, MAX_SMS_TEXT } from '../../core/messaging/send';
import { messagingDeps } from '../messaging/deps';

export const addressIn = z.strictObject({
  type: z.string().max(32),
  target: z.string().max(2048),
  target_name: z.string().max(255).optional(),
  name: z.string().max(255).optional(),
  detail: z.string().max(1024).optional(),
});

export const addressOut = z.object({
  type: z.string(),
  target: z.string(),
  target_name: z.string().optional(),
  name: z.string().optional(),
  detail: z.string().optional(),
});

export const messageSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.literal('sms'),
  source: addressOut,
  targets: z.array(z.object({ destination: addressOut, status: z.enum(TARGET_STATUSES), parts: z.number().int(), tm_update: legacyTime() })),
  text: z.string(),
  direction: z.enum(['outbound', 'inbound']),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const notFound = () => new ApiError('MESSAGE_NOT_FOUND', 'message not found');

export const routes = [
  defineRoute({
    method: 'post',
    path: '/messages',
    tag: 'Message',
    summary: 'Send an SMS',
    description: 'source: a tel address of an owned, active, normal number. Charged per target and SMS segment.',
    permission: 'agent',
    body: z.object({
      source: addressIn,
      destinations: z.array(addressIn).min(1).max(MAX_SMS_DESTINATIONS),
      text: z.string().min(1).max(MAX_SMS_TEXT),
    }),
    response: messageSchema,
    handler: async ({ body, auth, ctx }) => {
      const deps = messagingDeps(ctx);
      return messageJson(await sendSms(deps, auth.customerId, body));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/messages',
    tag: 'Message',
    summary: 'List messages',
    permission: 'agent',
    paginated: true,
    response: listOf(messageSchema),
    handler: async ({ auth, ctx, page }) => {
      const p = await messagesRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(messageJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/messages/:id',
    tag: 'Message',
    summary: 'Get a message',
    permission: 'agent',
    params: idParams,
    response: messageSchema,
    handler: async ({ params, auth, ctx }) => {
      const m = await messagesRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!m) throw notFound();
      return messageJson(m);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/messages/:id',
    tag: 'Message',
    summary: 'Delete a message',
    permission: 'manager',
    params: idParams,
    response: messageSchema,
    handler: async ({ params, auth, ctx }) => {
      const m = await messagesRepo(ctx.db).softDelete(auth.customerId, params.id);
      if (!m) throw notFound();
      const json = messageJson(m);
      await messagingDeps(ctx).publish('message_deleted', json);
      return json;
    },
  }),
];
