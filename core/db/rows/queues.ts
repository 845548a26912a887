/** Row types of core/repos/queues.ts's tables, declared apart so core/db/tables.ts imports no repository. */

export const ROUTING_METHODS = ['', 'random'] as const;

export type RoutingMethod = (typeof ROUTING_METHODS)[number];

export interface QueueRow {
  id: string;
  customer_id: string;
  name: string;
  detail: string;
  routing_method: RoutingMethod;
  tag_ids: string[];
  wait_flow_id: string;
  wait_timeout: number;
  service_timeout: number;
  direct_hash: string;
  total_incoming_count: number;
  total_serviced_count: number;
  total_abandoned_count: number;
  /** Made on first use by a name (TwiML <Enqueue>name): one live per customer and name. */
  made_by_name: boolean;
  /** Twilio's MaxSize: at most this many callers wait in it; null: no limit. */
  max_size: number | null;
  tm_create: Date;
  tm_update: Date | null;
  tm_delete: Date | null;
}
