/**
 * /webhook_deliveries: the customer's webhook delivery log (newest first), for debugging receivers;
 * /customer/webhook_test: a test event sent to the customer's webhook (both extensions).
 */
import { z } from 'zod';
import { defineRoute, uuid } from '../route';
import { webhookDeliveriesRepo, webhookDeliveryJson } from '../../core/repos/webhook-deliveries';
import { eventPublisher } from '../../core/events/bus';
import { publishResourceEvent, topicOf } from '../../core/events/catalogue';
import { invalidArgument } from '../../core/errors';
import { newId } from '../../core/ids';
import { listOf } from './schemas';
import { customerWebhookOf } from '../../core/repos/customers';

const deliverySchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  target: z.enum(['customer', 'activeflow']),
  uri: z.string(),
  method: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'refused']),
  attempts: z.number(),
  response_status: z.number().describe('HTTP status of the last attempt; 0 for a transport error'),
  error: z.string(),
  tm_create: z.string().nullable(),
  tm_update: z.string().nullable(),
});

export const routes = [
  defineRoute({
    method: 'get',
    path: '/webhook_deliveries',
    tag: 'Webhook',
    summary: 'List webhook delivery attempts (status, attempts, last HTTP status or error)',
    permission: 'manager',
    paginated: true,
    query: z.object({
      event_id: uuid().optional(),
      status: z.enum(['pending', 'delivered', 'failed', 'refused']).optional(),
      page_size: z.string().optional(),
      page_token: z.string().optional(),
    }),
    response: listOf(deliverySchema),
    handler: async ({ ctx, auth, page, query }) => {
      const filter: { event_id?: string; status?: 'pending' | 'delivered' | 'failed' | 'refused' } = {};
      if (query.event_id) filter.event_id = query.event_id;
      if (query.status) filter.status = query.status;
      const p = await webhookDeliveriesRepo(ctx.db).list(auth.customerId, page, filter);
      return { result: p.result.map(webhookDeliveryJson), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customer/webhook_test',
    tag: 'Webhook',
    summary: "Send a test event to the customer's webhook",
    description:
      'Publishes a `webhook_test` event of the account. It takes the ordinary way of every event: the event stream ' +
      '(WebSocket subscribers of `customer_id:<id>:webhook:*` get it too), the delivery queue, signing, the egress ' +
      'policy and retries, and shows in GET /webhook_deliveries (filter `event_id`). 400 when no webhook is set.',
    permission: 'manager',
    status: 202,
    response: z.object({
      event_id: z.string().describe("the event's id: GET /webhook_deliveries?event_id= lists its deliveries"),
      event_type: z.literal('webhook_test'),
      topic: z.string(),
      timestamp: z.string(),
      webhook_uri: z.string(),
      webhook_method: z.string(),
    }),
    handler: async ({ ctx, auth }) => {
      const c = await customerWebhookOf(ctx.db, auth.customerId);
      if (!c?.webhook_uri || !c.webhook_method) throw invalidArgument('the account has no webhook: set webhook_uri and webhook_method with PUT /customer first', [{ field: 'webhook_uri' }]);
      const e = await publishResourceEvent(eventPublisher(ctx), 'webhook_test', {
        id: newId(),
        customer_id: auth.customerId,
        message: "A test event: your webhook receives the account's events.",
        webhook_uri: c.webhook_uri,
        webhook_method: c.webhook_method,
      });
      return { event_id: e.id, event_type: 'webhook_test' as const, topic: topicOf(e), timestamp: e.timestamp, webhook_uri: c.webhook_uri, webhook_method: c.webhook_method };
    },
  }),
];
