/**
 * The events store behind /timelines and /aggregated-events: a consumer-group reader ("events-store")
 * writes each stream event once into `events` (the event id is the key, so a redelivery is a no-op).
 */
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { EventSubscriber, type PlatformEvent } from './bus';
import { topicResourceOf } from './catalogue';
import { clock } from '../clock';
import { isUuid } from '../ids';

export async function storeEvent(db: Knex, e: PlatformEvent): Promise<void> {
  if (!isUuid(e.customer_id) || !isUuid(e.resource_id)) return;
  const af = e.data.activeflow_id;
  await db('events')
    .insert({
      id: e.id,
      customer_id: e.customer_id,
      event_type: e.event_type,
      resource: topicResourceOf(e.event_type),
      resource_id: e.resource_id,
      activeflow_id: isUuid(af) ? af : topicResourceOf(e.event_type) === 'activeflow' ? e.resource_id : null,
      timestamp: e.timestamp,
      data: JSON.stringify(e.data),
      tm_create: clock.now(),
    })
    .onConflict('id')
    .ignore();
}

export async function startEventStore(db: Knex, redis: Redis, opts: { stream: string; group?: string; onError?: (err: unknown) => void }): Promise<{ close(): Promise<void> }> {
  const reader = redis.duplicate();
  // The batch is acknowledged only after every row is written (insert ignores a redelivered id).
  const sub = new EventSubscriber(reader, {
    stream: opts.stream,
    group: opts.group ?? 'events-store',
    consumer: `store-${process.pid}`,
    blockMs: 500,
    handler: async (events) => {
      for (const e of events) await storeEvent(db, e);
    },
  });
  sub.on('error', (err: unknown) => opts.onError?.(err));
  await sub.start();
  return {
    async close() {
      await sub.stop();
      reader.disconnect();
    },
  };
}
