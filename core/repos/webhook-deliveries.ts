/** The webhook delivery log: one row per event and target, pending until delivered or given up. */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatRfc3339 } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { DeliveryStatus, WebhookDeliveryRow } from '../db/rows/webhook-deliveries';
export type { DeliveryStatus, WebhookDeliveryRow } from '../db/rows/webhook-deliveries';

export function webhookDeliveryJson(r: WebhookDeliveryRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    event_id: r.event_id,
    event_type: r.event_type,
    target: r.target,
    uri: r.uri,
    method: r.method,
    status: r.status,
    attempts: r.attempts,
    response_status: r.response_status,
    error: r.error,
    tm_create: formatRfc3339(r.tm_create),
    tm_update: formatRfc3339(r.tm_update),
  };
}

export function webhookDeliveriesRepo(db: Db) {
  const table = () => db('webhook_deliveries');
  return {
    /** Inserts once per (event, target); a redelivered event adds nothing. */
    async add(input: Pick<WebhookDeliveryRow, 'customer_id' | 'event_id' | 'event_type' | 'target' | 'uri' | 'method' | 'body'>): Promise<boolean> {
      const rows = await table()
        .insert({ id: newId(), ...input, status: 'pending', tm_create: clock.now() })
        .onConflict(['event_id', 'target'])
        .ignore()
        .returning('id');
      return rows.length > 0;
    },
    /** Many rows in one statement, numbered in array order; returns the customers that got new rows. */
    async addMany(inputs: Pick<WebhookDeliveryRow, 'customer_id' | 'event_id' | 'event_type' | 'target' | 'uri' | 'method' | 'body'>[]): Promise<Set<string>> {
      if (inputs.length === 0) return new Set();
      const now = clock.now();
      const rows = (await table()
        .insert(inputs.map((i) => ({ id: newId(), ...i, status: 'pending', tm_create: now })))
        .onConflict(['event_id', 'target'])
        .ignore()
        .returning('customer_id')) as { customer_id: string }[];
      return new Set(rows.map((r) => r.customer_id));
    },
    async oldestPending(customerId: string): Promise<WebhookDeliveryRow | null> {
      return ((await table().where({ customer_id: customerId, status: 'pending' }).orderBy('seq').first()) as WebhookDeliveryRow | undefined) ?? null;
    },
    async hasPending(customerId: string): Promise<boolean> {
      return !!(await table().where({ customer_id: customerId, status: 'pending' }).first('id'));
    },
    async record(id: string, patch: Partial<Pick<WebhookDeliveryRow, 'status' | 'attempts' | 'response_status' | 'error'>>): Promise<void> {
      await table()
        .where({ id })
        .update({ ...patch, tm_update: clock.now() });
    },
    async list(customerId: string, params: PageParams, filter: { event_id?: string; status?: DeliveryStatus } = {}): Promise<Page<WebhookDeliveryRow>> {
      const q = table()
        .where({ customer_id: customerId, ...filter })
        .select('*');
      return toPage(await paginate<WebhookDeliveryRow>(q, params), (r) => r);
    },
  };
}

/** Deliveries of every customer waiting to be sent or retried (the webhook_deliveries_pending gauge). */
export async function countPendingWebhookDeliveries(db: Db): Promise<number> {
  const r = (await db.raw(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`)) as { rows: { n: number }[] };
  return r.rows[0]?.n ?? 0;
}
