// A webhook delivery row as the hook sender leaves it (a call_hangup POSTed to the customer's hook), for
// the suites that count deliveries: the dashboard's webhook failures (test/observability, test/console).
import type { Knex } from 'knex';
import { newId } from '../core/ids';
import type { DeliveryStatus } from '../core/repos/webhook-deliveries';

/** One delivery of `customerId` with `status`, created at `tmCreate`. */
export async function insertDelivery(db: Knex, customerId: string, status: DeliveryStatus, tmCreate: Date): Promise<void> {
  await db('webhook_deliveries').insert({
    id: newId(),
    customer_id: customerId,
    event_id: newId(),
    event_type: 'call_hangup',
    target: 'customer',
    uri: 'https://hooks.example.test/x',
    method: 'POST',
    body: '{}',
    status,
    tm_create: tmCreate,
  });
}
