/**
 * Backlog gauges read from Postgres when Prometheus scrapes (docs/observability.md): callers
 * waiting in call-center queues, and webhook deliveries not yet sent. Platform-wide numbers: every
 * control-api copy reports the same value (alert on max()). A read that fails or takes over 2 s
 * leaves the gauge at -1 for that scrape, which the alert rules do not mistake for a backlog.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Db } from '../core/db/knex';
import { countWaitingQueuecalls } from '../core/repos/queuecalls';
import { countPendingWebhookDeliveries } from '../core/repos/webhook-deliveries';

const TIMEOUT_MS = 2000;

async function count(db: Db, read: (db: Db) => Promise<number>): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([read(db), new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error('timeout')), TIMEOUT_MS)))]);
  } catch {
    return -1;
  } finally {
    clearTimeout(timer);
  }
}

export function registerBacklogMetrics(registry: Registry, db: Db): void {
  new Gauge({
    name: 'queuecalls_waiting',
    help: 'Callers waiting in call-center queues (queuecalls in status waiting); -1 when unreadable',
    registers: [registry],
    async collect() {
      this.set(await count(db, countWaitingQueuecalls));
    },
  });
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be sent or retried; -1 when unreadable',
    registers: [registry],
    async collect() {
      this.set(await count(db, countPendingWebhookDeliveries));
    },
  });
}
