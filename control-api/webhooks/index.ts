/**
 * Webhook delivery (README.md). A consumer-group reader of the event stream (one copy of
 * control-api handles each event) writes one delivery row per target, in stream order, and wakes
 * the customer's BullMQ "drain" job. That job (job id = customer) sends the customer's oldest
 * pending delivery first and only then the next, so order is kept per customer while different
 * customers proceed in parallel. A 5xx or transport error leaves the row pending and fails the
 * job with a backoff delay; after maxAttempts the row is marked failed and the drain moves on.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { bullConnection } from '../bull-connection';
import type { AppContext } from '../context';
import { EventSubscriber, eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { topicOf } from '../../core/events/catalogue';
import { webhookDeliveriesRepo } from '../../core/repos/webhook-deliveries';
import { isUuid, EMPTY_UUID } from '../../core/ids';
import { attempt, WEBHOOK_TIMEOUT_MS, type AttemptResult } from './send';
import type { EgressPolicy } from '../../core/net';
import { TtlCache } from '../../core/ttl-cache';
import { platformMetrics } from '../../core/metrics';
import { CDR_EVENT_TYPE, cdrMessage, cdrWebhookEnabled } from './cdr';
import { customerWebhookSecretOf, customerWebhooksOf } from '../../core/repos/customers';
import { activeflowWebhookOf } from '../../core/repos/activeflows';
import { DeliveryTraces } from './trace';

export const WEBHOOK_QUEUE = 'webhooks';

export interface WebhookOptions {
  stream?: string;
  /** BullMQ queue name (default "webhooks"; tests running several services use their own). */
  queue?: string;
  /** Consumer group on the stream (default "webhooks"). */
  group?: string;
  /** The egress policy targets are checked against (default ctx.egress, from EGRESS_ALLOW_CIDRS). */
  egress?: EgressPolicy;
  /** First retry delay; doubles per attempt (default 1000 ms). */
  baseDelayMs?: number;
  /** Attempts per delivery before it is marked failed (default 5). */
  maxAttempts?: number;
  timeoutMs?: number;
  /** Customers drained in parallel by this copy (default 32). */
  concurrency?: number;
}

export interface WebhookService {
  /** Handles one event as the stream reader does (tests, benchmarks). */
  handle(e: PlatformEvent): Promise<void>;
  close(): Promise<void>;
}

class RetryLater extends Error {
  constructor(
    readonly delayMs: number,
    message: string,
  ) {
    super(message);
  }
}

/** The activeflow's own webhook; the activeflows table belongs to the flow module, so read it defensively. */
async function activeflowWebhook(ctx: AppContext, customerId: string, id: unknown): Promise<{ uri: string; method: string } | null> {
  if (!isUuid(id) || id === EMPTY_UUID) return null;
  try {
    const row = await activeflowWebhookOf(ctx.db, customerId, id);
    return row?.webhook_uri ? { uri: row.webhook_uri, method: row.webhook_method || 'POST' } : null;
  } catch {
    return null;
  }
}

export async function startWebhooks(ctx: AppContext, opts: WebhookOptions = {}): Promise<WebhookService> {
  const egress = opts.egress ?? ctx.egress;
  const baseDelay = opts.baseDelayMs ?? 1000;
  const maxAttempts = opts.maxAttempts ?? 5;
  const deliveries = webhookDeliveriesRepo(ctx.db);
  const connection = bullConnection(ctx.config.redisUrl);
  const prefix = `${ctx.config.redisKeyPrefix}bull`;
  const queueName = opts.queue ?? WEBHOOK_QUEUE;
  const queue = new Queue(queueName, { connection, prefix });
  const traces = new DeliveryTraces(ctx.redis, ctx.config.redisKeyPrefix);
  // read at each attempt, never kept: a rotated secret (POST /customer/webhook_secret) signs the very next attempt, on every copy
  const secretOf = async (customerId: string) => (await customerWebhookSecretOf(ctx.db, customerId)) ?? '';
  const sender: Sender = { deliveries, traces, egress, timeoutMs: opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS, maxAttempts, baseDelay };

  const wake = (customerId: string) =>
    queue.add('drain', { customerId }, { jobId: `drain-${customerId}`, removeOnComplete: true, removeOnFail: true, attempts: 1_000_000, backoff: { type: 'delivery' } });

  const hooks = customerHookCache(ctx);

  const handleBatch = (events: PlatformEvent[]) => deliveryRows({ ctx, hooks, traces, deliveries, wake }, events);
  const handle = (e: PlatformEvent) => handleBatch([e]);

  async function drain(job: Job<{ customerId: string }>): Promise<void> {
    const { customerId } = job.data;
    let lingered = false;
    for (;;) {
      const d = await deliveries.oldestPending(customerId);
      if (!d) {
        // Under a steady flow the next event is usually a few ms away: waiting briefly saves a job cycle.
        if (lingered) return;
        lingered = true;
        await new Promise((r) => setTimeout(r, 30));
        continue;
      }
      lingered = false;
      await deliverOnce(sender, d, await secretOf(customerId));
    }
  }

  const worker = new Worker(queueName, drain, {
    connection,
    prefix,
    concurrency: opts.concurrency ?? 32,
    settings: { backoffStrategy: (_n, _t, err) => (err instanceof RetryLater ? err.delayMs : baseDelay) },
  });
  worker.on('error', (err) => ctx.logger.warn({ err: err.message }, 'webhook worker error'));
  // A delivery added while its customer's drain was finishing found the job id taken: wake again.
  worker.on('completed', (job: Job<{ customerId: string }>) => {
    void deliveries
      .hasPending(job.data.customerId)
      .then((p) => (p ? wake(job.data.customerId) : undefined))
      .catch(() => undefined);
  });

  const reader = ctx.redis.duplicate();
  // Each batch becomes delivery rows (numbered in stream order) before it is acknowledged, so a
  // crash between reading and writing loses nothing: the batch is read again.
  const sub = new EventSubscriber(reader, {
    stream: opts.stream ?? eventStreamKey(ctx.config.redisKeyPrefix),
    group: opts.group ?? 'webhooks',
    consumer: `control-api-${process.pid}`,
    blockMs: 500,
    handler: (batch) => handleBatch(batch),
  });
  sub.on('error', (err: unknown) => ctx.logger.warn({ err: String(err) }, 'webhook reader error'));
  await sub.start();

  return {
    handle,
    async close() {
      await sub.stop();
      await worker.close();
      await queue.close();
      reader.disconnect();
    },
  };
}

type Hook = { webhook_uri: string; webhook_method: string; cdr: boolean };

/** The customers' webhooks, each read at most once a second (10,000 customers kept). */
function customerHookCache(ctx: AppContext): { of(ids: string[]): Promise<Map<string, Hook | null>>; forget(id: string): void } {
  const hooksOf = new TtlCache<Hook | null>(1000, 10_000);
  return {
    forget: (id) => hooksOf.delete(id),
    async of(ids) {
      const out = new Map<string, Hook | null>();
      const unknown = ids.filter((id) => {
        const c = hooksOf.get(id);
        if (c !== undefined) out.set(id, c);
        return c === undefined;
      });
      if (unknown.length) {
        const rows = await customerWebhooksOf(ctx.db, unknown);
        for (const id of unknown) {
          const r = rows.find((x) => x.id === id);
          const h = r && r.webhook_uri && r.webhook_method ? { webhook_uri: r.webhook_uri, webhook_method: r.webhook_method, cdr: cdrWebhookEnabled(r.metadata) } : null;
          hooksOf.set(id, h);
          out.set(id, h);
        }
      }
      return out;
    },
  };
}

type DeliveryRow = Parameters<ReturnType<typeof webhookDeliveriesRepo>['addMany']>[0][number];

/** Adds to `rows` the deliveries of one event (customer webhook, CDR, activeflow webhook), to `traced` their trace links. */
async function deliveriesOf(ctx: AppContext, e: PlatformEvent, c: Hook | null | undefined, rows: DeliveryRow[], traced: [string, PlatformEvent][]): Promise<void> {
  // a call's quality samples (every 5 s per leg) stay on the stream and the timeline: webhooks get its final one and the alarms
  if (e.event_type === 'call_quality' && e.data.final !== true) return;
  const body = JSON.stringify({ event_type: e.event_type, timestamp: e.timestamp, topic: topicOf(e), data: e.data });
  const base = { customer_id: e.customer_id, event_id: e.id, event_type: e.event_type, body };
  if (c) rows.push({ ...base, target: 'customer', uri: c.webhook_uri, method: c.webhook_method });
  // opted in: the call's record follows its hangup (cdr.ts)
  if (c?.cdr && e.event_type === 'call_hangup') {
    const m = await cdrMessage(ctx.db, e);
    if (m) rows.push({ customer_id: e.customer_id, event_id: m.eventId, event_type: CDR_EVENT_TYPE, body: m.body, target: 'customer', uri: c.webhook_uri, method: c.webhook_method });
    if (m) traced.push([m.eventId, e]);
  }
  // an activeflow's own events name it by id; every other event by activeflow_id
  const af = await activeflowWebhook(ctx, e.customer_id, e.resource === 'activeflow' ? e.data.id : e.data.activeflow_id);
  if (af) rows.push({ ...base, target: 'activeflow', uri: af.uri, method: af.method });
  if (c || af) traced.push([e.id, e]);
}

type Recorded = Parameters<ReturnType<typeof webhookDeliveriesRepo>['record']>[1];
/** What an attempt writes on its delivery row, and its outcome (a retry leaves the row pending). */
function recorded(r: AttemptResult, attempts: number, maxAttempts: number): { outcome: 'delivered' | 'refused' | 'failed' | 'retry'; row: Recorded } {
  if (r.kind === 'delivered') return { outcome: 'delivered', row: { status: 'delivered', attempts, response_status: r.status, error: '' } };
  if (r.kind === 'refused') return { outcome: 'refused', row: { status: 'refused', attempts, error: r.error } };
  if (attempts >= maxAttempts) return { outcome: 'failed', row: { status: 'failed', attempts, response_status: r.status, error: r.error } };
  return { outcome: 'retry', row: { attempts, response_status: r.status, error: r.error } };
}

interface Sender {
  deliveries: ReturnType<typeof webhookDeliveriesRepo>;
  traces: DeliveryTraces;
  egress: EgressPolicy;
  timeoutMs: number;
  maxAttempts: number;
  baseDelay: number;
}

type Delivery = NonNullable<Awaited<ReturnType<Sender['deliveries']['oldestPending']>>>;

/** One attempt at a delivery, recorded on its row; throws RetryLater when it is to be tried again. */
async function deliverOnce({ deliveries, traces, egress, timeoutMs, maxAttempts, baseDelay }: Sender, d: Delivery, secret: string): Promise<void> {
  const attempts = d.attempts + 1;
  const span = await traces.start(d, attempts);
  const r = await attempt({ uri: d.uri, method: d.method, secret, body: d.body, egress, timeoutMs });
  const { outcome, row } = recorded(r, attempts, maxAttempts);
  traces.end(span, r, outcome);
  platformMetrics.webhookAttempts.labels(outcome).inc();
  await deliveries.record(d.id, row);
  if (outcome === 'retry' && r.kind === 'retry') throw new RetryLater(baseDelay * 2 ** (attempts - 1), r.error);
}

/** Turns a batch of events (stream order) into delivery rows, then wakes each customer's drain once. */
async function deliveryRows(
  {
    ctx,
    hooks,
    traces,
    deliveries,
    wake,
  }: { ctx: AppContext; hooks: ReturnType<typeof customerHookCache>; traces: DeliveryTraces; deliveries: Sender['deliveries']; wake: (customerId: string) => Promise<unknown> },
  events: PlatformEvent[],
): Promise<void> {
  // a test event is sent right after the webhook was set: it goes to the webhook as it is now
  for (const e of events) if (e.event_type === 'webhook_test') hooks.forget(e.customer_id);
  const known = await hooks.of([...new Set(events.map((e) => e.customer_id).filter((id) => isUuid(id)))]);
  const rows: DeliveryRow[] = [];
  // each delivery's event id and the event whose trace it joins
  const traced: [string, PlatformEvent][] = [];
  for (const e of events) await deliveriesOf(ctx, e, known.get(e.customer_id), rows, traced);
  // before the rows: a drain may take them at once
  await traces.keep(traced);
  for (const customerId of await deliveries.addMany(rows)) await wake(customerId);
}
