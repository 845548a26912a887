/** /webhook_deliveries: the customer's webhook delivery log (newest first), for debugging receivers. */
import { z } from 'zod';
import { defineRoute, uuid } from '../route';
import { webhookDeliveriesRepo, webhookDeliveryJson } from '../../core/repos/webhook-deliveries';
import { listOf } from './schemas';

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
];
