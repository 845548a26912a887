/**
 * Numbers: buy (POST), list, get, update flows and labels (PUT), release (DELETE), renew, and the
 * available numbers. Virtual numbers (+899…) are free and generated here; normal numbers come from
 * the local inventory (core/numbers/inventory.ts), need a verified identity and are charged.
 */
import { z } from 'zod';
import { defineRoute, idParams, refId, text, uuid } from '../route';
import { ApiError, invalidArgument, missingParameter } from '../../core/errors';
import { parseTimestamp } from '../../core/time';
import { numbersRepo, numberJson, type NumberRow } from '../../core/repos/numbers';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { AppContext } from '../context';
import { purchaseNumber, renewNumbers, availableVirtualNumbers } from '../../core/numbers/purchase';
import { numberInventory } from '../../core/numbers/inventory';
import { assertFlowRef } from '../../core/numbers/flow-refs';

const numberType = z.enum(['normal', 'virtual']);

export const NumberSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  number: z.string(),
  type: numberType,
  call_flow_id: z.string(),
  message_flow_id: z.string(),
  name: z.string(),
  detail: z.string(),
  status: z.enum(['active', 'deleted']),
  t38_enabled: z.boolean(),
  emergency_enabled: z.boolean(),
  metadata: z.object({ rtp_debug: z.boolean() }).loose(),
  tm_purchase: z.string(),
  tm_renew: z.string(),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

const AvailableNumberSchema = z.object({
  number: z.string(),
  country: z.string(),
  region: z.string(),
  postal_code: z.string(),
  features: z.array(z.enum(['emergency', 'fax', 'mms', 'sms', 'voice'])),
});

const page = <T extends z.ZodType>(item: T) => z.object({ result: z.array(item), next_page_token: z.string() });

const notFound = () => new ApiError('NUMBER_NOT_FOUND', 'number not found');

/** The caller's live number, or NUMBER_NOT_FOUND. */
async function owned(ctx: AppContext, customerId: string, id: string): Promise<NumberRow> {
  const n = await numbersRepo(ctx.db).getOwned(customerId, id);
  if (!n) throw notFound();
  return n;
}

/** Publishes number_updated with the number's API JSON (after the write); returns that JSON. */
async function updated(ctx: AppContext, n: NumberRow | null) {
  if (!n) throw notFound();
  const json = numberJson(n);
  await publishResourceEvent(eventPublisher(ctx), 'number_updated', json);
  return json;
}

export const routes = [
  defineRoute({
    method: 'post',
    path: '/numbers',
    tag: 'Number',
    summary: 'Buy a number',
    description:
      'Virtual numbers (+899 followed by 9 digits) are free. Normal numbers must be in the available inventory, ' +
      'need identity_verification_status verified (403 IDENTITY_VERIFICATION_REQUIRED) and are charged (402 INSUFFICIENT_BALANCE).',
    permission: 'manager',
    body: z.object({
      number: z.string().max(32),
      type: numberType.optional(),
      call_flow_id: refId(),
      message_flow_id: refId(),
      name: text().optional(),
      detail: text(1024).optional(),
    }),
    response: NumberSchema,
    handler: async ({ body, auth, ctx }) => numberJson(await purchaseNumber(ctx.db, numberInventory(), auth.customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/numbers',
    tag: 'Number',
    summary: 'List numbers',
    permission: 'agent',
    paginated: true,
    response: page(NumberSchema),
    handler: async ({ auth, ctx, page }) => {
      const p = await numbersRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map(numberJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/numbers/renew',
    tag: 'Number',
    summary: 'Renew normal numbers',
    description: 'Renews (and charges) every normal number of the customer last renewed at or before tm_renew, or only number_ids. ' + 'All or nothing: 402 INSUFFICIENT_BALANCE renews none.',
    permission: 'manager',
    body: z.object({ tm_renew: z.string().max(40).optional(), number_ids: z.array(uuid()).max(1000).optional() }),
    response: z.array(NumberSchema),
    handler: async ({ body, auth, ctx }) => {
      if (body.tm_renew === undefined && body.number_ids === undefined) throw invalidArgument('tm_renew or number_ids is required');
      let before = new Date(8.64e15);
      if (body.tm_renew !== undefined) {
        const d = parseTimestamp(body.tm_renew);
        if (!d) throw invalidArgument('tm_renew: not a timestamp', [{ field: 'tm_renew' }]);
        before = d;
      }
      return (await renewNumbers(ctx.db, auth.customerId, before, body.number_ids)).map(numberJson);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/numbers/:id',
    tag: 'Number',
    summary: 'Get a number',
    permission: 'agent',
    params: idParams,
    response: NumberSchema,
    handler: async ({ params, auth, ctx }) => {
      const n = await numbersRepo(ctx.db).getOwned(auth.customerId, params.id);
      if (!n) throw notFound();
      return numberJson(n);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/numbers/:id',
    tag: 'Number',
    summary: 'Update a number',
    description: 'Omitted fields stay unchanged. Flow ids: the empty UUID unsets.',
    permission: 'manager',
    params: idParams,
    body: z.object({ call_flow_id: uuid().optional(), message_flow_id: uuid().optional(), name: text().optional(), detail: text(1024).optional() }),
    response: NumberSchema,
    handler: async ({ params, body, auth, ctx }) => {
      const repo = numbersRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
      if (body.call_flow_id) await assertFlowRef(ctx.db, auth.customerId, body.call_flow_id.toLowerCase(), 'call_flow_id');
      if (body.message_flow_id) await assertFlowRef(ctx.db, auth.customerId, body.message_flow_id.toLowerCase(), 'message_flow_id');
      return updated(ctx, await repo.update(params.id, body));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/numbers/:id/flow_ids',
    tag: 'Number',
    summary: "Set a number's call and message flows",
    description: 'Both ids are required; the empty UUID unsets one. A flow must be a live flow of the customer.',
    permission: 'manager',
    params: idParams,
    body: z.object({ call_flow_id: uuid(), message_flow_id: uuid() }),
    response: NumberSchema,
    handler: async ({ params, body, auth, ctx }) => {
      await owned(ctx, auth.customerId, params.id);
      const call = body.call_flow_id.toLowerCase();
      const message = body.message_flow_id.toLowerCase();
      await assertFlowRef(ctx.db, auth.customerId, call, 'call_flow_id');
      await assertFlowRef(ctx.db, auth.customerId, message, 'message_flow_id');
      return updated(ctx, await numbersRepo(ctx.db).update(params.id, { call_flow_id: call, message_flow_id: message }));
    },
  }),
  defineRoute({
    method: 'put',
    path: '/numbers/:id/metadata',
    tag: 'Number',
    summary: "Update a number's metadata flags (absent flags keep their value)",
    permission: 'manager',
    params: idParams,
    body: z.object({ rtp_debug: z.boolean().optional().describe("capture RTP of calls to this number as PCAP (OR'd with the customer's flag)") }),
    response: NumberSchema,
    handler: async ({ params, body, auth, ctx }) => {
      const n = await owned(ctx, auth.customerId, params.id);
      const flags = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
      return updated(ctx, await numbersRepo(ctx.db).update(params.id, { metadata: { ...(n.metadata ?? {}), ...flags } }));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/numbers/:id',
    tag: 'Number',
    summary: 'Release a number',
    permission: 'manager',
    params: idParams,
    response: NumberSchema,
    handler: async ({ params, auth, ctx }) => {
      const repo = numbersRepo(ctx.db);
      if (!(await repo.getOwned(auth.customerId, params.id))) throw notFound();
      const n = await repo.softDelete(params.id);
      if (!n) throw notFound();
      return numberJson(n);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/available_numbers',
    tag: 'Number',
    summary: 'Numbers available to buy',
    description: 'type virtual: generated +899 numbers; type normal (default): the local inventory of country_code.',
    permission: 'agent',
    query: z.object({
      type: numberType.optional(),
      country_code: z
        .string()
        .regex(/^[A-Za-z]{2}$/, 'ISO 3166 alpha-2')
        .optional(),
      page_size: z
        .string()
        .regex(/^-?\d{1,9}$/, 'an integer')
        .optional(),
    }),
    response: z.object({ result: z.array(AvailableNumberSchema) }),
    handler: async ({ query, ctx }) => {
      const n = query.page_size === undefined ? 10 : Number(query.page_size);
      const size = n <= 0 || n > 100 ? 100 : n;
      if (query.type === 'virtual') return { result: await availableVirtualNumbers(ctx.db, size) };
      if (!query.country_code) throw missingParameter('country_code');
      const repo = numbersRepo(ctx.db);
      return { result: await numberInventory().available(query.country_code, size, (batch) => repo.taken(batch)) };
    },
  }),
];
