/**
 * Conversation accounts (a customer's account on sms, line or whatsapp). secret, token and
 * provider_data are write-only. Served at /conversation-accounts (spec) and /conversation_accounts
 * (the OpenAPI document's spelling).
 */
import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { EMPTY_UUID } from '../../core/ids';
import { defineRoute, idParams, uuid, type AnyRoute } from '../route';
import type { AppContext } from '../context';
import { listOf, legacyTime, uuidOut } from './schemas';
import { ACCOUNT_TYPES, conversationAccountJson, conversationAccountsRepo } from '../../core/repos/conversation-accounts';
import { assertFlowRef } from '../../core/numbers/flow-refs';
import { messagingDeps } from '../messaging/deps';

export const conversationAccountSchema = z.object({
  id: uuidOut(),
  customer_id: uuidOut(),
  type: z.enum(ACCOUNT_TYPES),
  name: z.string(),
  detail: z.string(),
  message_flow_id: uuidOut(),
  tm_create: legacyTime(),
  tm_update: legacyTime(),
  tm_delete: legacyTime(),
});

const providerData = z.strictObject({ phone_number_id: z.string().max(255).optional(), app_secret: z.string().max(1024).optional() });
const writable = {
  name: z.string().max(255),
  detail: z.string().max(1024),
  secret: z.string().max(4096),
  token: z.string().max(4096),
  provider_data: providerData.optional(),
  message_flow_id: uuid().optional(),
};

const notFound = () => new ApiError('CONVERSATION_ACCOUNT_NOT_FOUND', 'conversation account not found');

async function checkFlow(ctx: AppContext, customerId: string, flowId: string | undefined): Promise<string | undefined> {
  if (flowId === undefined) return undefined;
  const id = flowId.toLowerCase();
  if (id !== EMPTY_UUID) await assertFlowRef(ctx.db, customerId, id, 'message_flow_id');
  return id;
}

function group(base: string): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: base,
      tag: 'Conversation',
      summary: 'Create a conversation account',
      permission: 'manager',
      body: z.object({ type: z.enum(ACCOUNT_TYPES), ...writable }),
      response: conversationAccountSchema,
      handler: async ({ ctx, auth, body }) => {
        const message_flow_id = await checkFlow(ctx, auth.customerId, body.message_flow_id);
        const a = await conversationAccountsRepo(ctx.db).create({ ...body, customer_id: auth.customerId, ...(message_flow_id ? { message_flow_id } : {}) });
        const json = conversationAccountJson(a);
        await messagingDeps(ctx).publish('account_created', json);
        return json;
      },
    }),
    defineRoute({
      method: 'get',
      path: base,
      tag: 'Conversation',
      summary: 'List conversation accounts',
      permission: 'manager',
      paginated: true,
      response: listOf(conversationAccountSchema),
      handler: async ({ ctx, auth, page }) => {
        const p = await conversationAccountsRepo(ctx.db).list(auth.customerId, page);
        return { result: p.result.map(conversationAccountJson), next_page_token: p.next_page_token };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      tag: 'Conversation',
      summary: 'Get a conversation account',
      permission: 'manager',
      params: idParams,
      response: conversationAccountSchema,
      handler: async ({ ctx, auth, params }) => {
        const a = await conversationAccountsRepo(ctx.db).getOwned(auth.customerId, params.id);
        if (!a) throw notFound();
        return conversationAccountJson(a);
      },
    }),
    defineRoute({
      method: 'put',
      path: `${base}/:id`,
      tag: 'Conversation',
      summary: 'Update a conversation account',
      permission: 'manager',
      params: idParams,
      body: z.object({
        name: writable.name.optional(),
        detail: writable.detail.optional(),
        secret: writable.secret.optional(),
        token: writable.token.optional(),
        provider_data: providerData.optional(),
        message_flow_id: uuid().optional(),
      }),
      response: conversationAccountSchema,
      handler: async ({ ctx, auth, params, body }) => {
        const repo = conversationAccountsRepo(ctx.db);
        if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
        const message_flow_id = await checkFlow(ctx, auth.customerId, body.message_flow_id);
        const a = await repo.update(auth.customerId, params.id, { ...body, ...(message_flow_id ? { message_flow_id } : {}) });
        if (!a) throw notFound();
        const json = conversationAccountJson(a);
        await messagingDeps(ctx).publish('account_updated', json);
        return json;
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/:id`,
      tag: 'Conversation',
      summary: 'Delete a conversation account',
      permission: 'manager',
      params: idParams,
      response: conversationAccountSchema,
      handler: async ({ ctx, auth, params }) => {
        const a = await conversationAccountsRepo(ctx.db).softDelete(auth.customerId, params.id);
        if (!a) throw notFound();
        const json = conversationAccountJson(a);
        await messagingDeps(ctx).publish('account_deleted', json);
        return json;
      },
    }),
  ];
}

export const routes = [...group('/conversation-accounts'), ...group('/conversation_accounts')];
