/** Row types of core/repos/webhook-deliveries.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'refused';

export interface WebhookDeliveryRow {
  id: string;
  seq: number;
  customer_id: string;
  event_id: string;
  event_type: string;
  target: 'customer' | 'activeflow';
  uri: string;
  method: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number;
  error: string;
  body: string;
  tm_create: Date;
  tm_update: Date | null;
}
