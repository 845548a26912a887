/**
 * State changes published once through a Redis stream. Every control-api copy reads the stream from
 * its own position (WebSocket fan-out needs every event on every copy); webhook delivery reads it
 * through a consumer group, so each event is delivered by exactly one copy. A publisher writes the
 * record to Postgres first, then publishes; the event id lets readers drop a redelivered duplicate.
 */
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { newId } from '../ids';
import { clock } from '../clock';
import { injectContext } from '../tracing';

export interface PlatformEvent {
  id: string;
  event_type: string;
  customer_id: string;
  /** The resource part of the topic: the event type up to its first underscore (call_hangup → call). */
  resource: string;
  resource_id: string;
  /** RFC 3339. */
  timestamp: string;
  data: Record<string, unknown>;
  /**
   * W3C trace context active where the event was published (core/tracing), so that its webhook
   * deliveries join that trace; absent when tracing is off. Never sent to clients or stored.
   */
  trace?: { traceparent: string; tracestate?: string };
}

/** The stream's name; its Redis key is this under the deployment's REDIS_KEY_PREFIX (eventStreamKey). */
const EVENT_STREAM = 'events';

/**
 * The Redis key of the event stream of the deployment whose REDIS_KEY_PREFIX is `keyPrefix`: the one place
 * it is derived, so deployments sharing a Redis under different prefixes never see each other's events.
 * Prefix '' gives 'events', the key every deployment used before the prefix applied (docs/deploy.md).
 */
export function eventStreamKey(keyPrefix: string): string {
  return `${keyPrefix}${EVENT_STREAM}`;
}
/** Stream length kept (approximate trim): enough for a reader that was down a few minutes. */
const MAX_LEN = 200_000;

export function resourceOf(eventType: string): string {
  const i = eventType.indexOf('_');
  return i < 0 ? eventType : eventType.slice(0, i);
}

export class EventPublisher {
  constructor(
    private readonly redis: Redis,
    /** The stream's key: eventStreamKey(REDIS_KEY_PREFIX), or a test's private stream. */
    readonly stream: string,
  ) {}

  async publish(eventType: string, customerId: string, resourceId: string, data: Record<string, unknown>): Promise<PlatformEvent> {
    const event: PlatformEvent = {
      id: newId(),
      event_type: eventType,
      customer_id: customerId,
      resource: resourceOf(eventType),
      resource_id: resourceId,
      timestamp: clock.now().toISOString(),
      data,
    };
    const { traceparent, tracestate } = injectContext();
    if (traceparent) event.trace = { traceparent, ...(tracestate ? { tracestate } : {}) };
    await this.redis.xadd(this.stream, 'MAXLEN', '~', String(MAX_LEN), '*', 'e', JSON.stringify(event));
    return event;
  }
}

/** A publisher onto the event stream of the deployment configured as `d` (control-api's context, media-app's parts). */
export function eventPublisher(d: { redis: Redis; config: { redisKeyPrefix: string } }): EventPublisher {
  return new EventPublisher(d.redis, eventStreamKey(d.config.redisKeyPrefix));
}

function decode(fields: string[]): PlatformEvent | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === 'e') {
      try {
        return JSON.parse(fields[i + 1]!) as PlatformEvent;
      } catch {
        return null;
      }
    }
  }
  return null;
}

type StreamReply = [string, [string, string[]][]][] | null;

export interface SubscriberOptions {
  /** The stream's key: eventStreamKey(REDIS_KEY_PREFIX), or a test's private stream. */
  stream: string;
  /** Read through this consumer group: each event goes to one consumer of the group. */
  group?: string;
  consumer?: string;
  blockMs?: number;
  /**
   * Awaited for each batch before the batch is acknowledged (group mode): when it throws, the batch
   * stays pending and is read again, so a crash or a failed write loses nothing.
   */
  handler?: (events: PlatformEvent[]) => Promise<void>;
}

/**
 * Reads the stream on a dedicated connection (XREAD BLOCK holds it) and emits 'event' for each new
 * event. Without a group it starts after the last entry present at start(), so nothing published
 * after start() is missed. With a group it first re-reads its own pending entries.
 */
export class EventSubscriber extends EventEmitter {
  private running = false;
  private lastId = '0-0';
  /** Group mode: '0' re-reads this consumer's pending entries, '>' reads new ones. */
  private groupCursor = '0';
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];
  private loopDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly opts: SubscriberOptions,
  ) {
    super();
  }

  async start(): Promise<void> {
    const stream = this.opts.stream;
    if (this.opts.group) {
      try {
        await this.redis.xgroup('CREATE', stream, this.opts.group, '$', 'MKSTREAM');
      } catch (err) {
        if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
      }
    } else {
      const last = (await this.redis.xrevrange(stream, '+', '-', 'COUNT', 1)) as [string, string[]][];
      this.lastId = last[0]?.[0] ?? '0-0';
    }
    this.running = true;
    this.loopDone = this.loop(stream);
  }

  private remember(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    this.seenOrder.push(id);
    if (this.seenOrder.length > 10_000) this.seen.delete(this.seenOrder.shift()!);
    return true;
  }

  private async read(stream: string): Promise<StreamReply> {
    const block = String(this.opts.blockMs ?? 1000);
    if (!this.opts.group) {
      return (await this.redis.xread('COUNT', '500', 'BLOCK', block, 'STREAMS', stream, this.lastId)) as StreamReply;
    }
    const consumer = (this.opts.consumer ??= newId());
    const args = this.groupCursor === '0' ? [] : ['BLOCK', block];
    return (await this.redis.xreadgroup('GROUP', this.opts.group, consumer, 'COUNT', '500', ...(args as ['BLOCK', string]), 'STREAMS', stream, this.groupCursor)) as StreamReply;
  }

  private async loop(stream: string): Promise<void> {
    while (this.running) {
      try {
        const reply = await this.read(stream);
        const entries = reply?.[0]?.[1] ?? [];
        if (this.opts.group && this.groupCursor === '0' && entries.length === 0) this.groupCursor = '>'; // pending drained
        if (entries.length === 0) continue;
        const fresh: PlatformEvent[] = [];
        for (const [entryId, fields] of entries) {
          this.lastId = entryId;
          const event = decode(fields);
          if (event && this.remember(event.id)) fresh.push(event);
        }
        if (this.opts.handler && fresh.length > 0) await this.opts.handler(fresh);
        for (const event of fresh) this.emit('event', event);
        if (this.opts.group) await this.redis.xack(stream, this.opts.group, ...entries.map(([id]) => id));
      } catch (err) {
        if (!this.running) return;
        if (this.opts.group) {
          this.groupCursor = '0'; // read the unacknowledged batch again
          this.seen.clear();
          this.seenOrder.length = 0;
        }
        this.emit('error', err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Stops after the current blocking read returns (at most blockMs) and its batch is handled. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loopDone;
  }
}
